import { formatCount } from '../conversation/size-bounds.js';
import type { Conversation, TurnSettings } from '../conversation/types.js';
import { ConfigError, isChatloadError } from '../errors/index.js';
import type { TokenCounter } from '../tokenizer/index.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { BUILTIN_CORPUS } from './corpus.js';
import { sampleMany, type Distribution } from './distributions.js';
import type { GenerationConfig } from './generation-config.js';
import { Rng } from './rng.js';
import { addSyntheticImages } from './synthetic-images.js';
import { decodingTokenizer, realize, TokenStream, type Segment } from './token-stream.js';
import { readUtf8File, type Utf8ReadOptions } from '../util/utf8-text.js';
import { statInputFile } from '../util/input-file.js';

/** The instruction of every user message, as in the reference. */
export const BASE_PROMPT = 'Please rewrite the following text and add more content: ';

/** The per-turn header naming the conversation, as in the reference. */
export function conversationHeader(index: number): string {
  return `${index} is a nice number... `;
}

/** The random stream of the generator, derived from --seed (so generation never shifts the engine's streams). */
const GENERATOR_STREAM = 0x67656e;

/** What was asked of and what came out for one user turn (for tests, stats and the drift report). */
export interface TurnTokens {
  /** The sampled size: num_tokens, plus the conversation prefix on the first turn. */
  sampled: number;
  /** The size aimed at: `sampled`, or the fixed parts' size when they alone are larger. */
  target: number;
  /** The re-encoded size of the message. */
  actual: number;
}

/** A generated dataset and its token accounting. */
export interface GeneratedDataset {
  conversations: Conversation[];
  /** Per conversation, per user turn. */
  userTurns: TurnTokens[][];
  /** Per conversation, per answer: the re-encoded size of the recorded answer text. */
  answerTokens: number[][];
  /** Tokens of the shared system prompt / common prefix (0 when none). */
  commonPrefixTokens: number;
  /** Largest |actual - target| over all user turns (0 when every turn is exact). */
  maxDrift: number;
  /** Tokens in the corpus stream. */
  corpusTokens: number;
}

function toInt(x: number): number {
  return Math.round(x);
}

/** Largest text file a generation config may name (a JavaScript string holds ~512 MiB of text at most). */
const MAX_TEXT_FILE_BYTES = 256 * 1024 * 1024;

async function readCorpus(config: GenerationConfig, options: Utf8ReadOptions): Promise<string[]> {
  if (config.textFiles.length === 0) return [BUILTIN_CORPUS];
  return Promise.all(
    config.textFiles.map(async (file) => {
      try {
        // A device or a pipe (/dev/zero) would be read for ever: regular files only, and of a size a string can hold.
        const info = await statInputFile(file, (why, cause) => new ConfigError(`${file}: ${why}`, { cause }));
        if (info.size > MAX_TEXT_FILE_BYTES) throw new ConfigError(`${file} is ${info.size} bytes; expected at most ${MAX_TEXT_FILE_BYTES} (256 MiB)`);
        return await readUtf8File(file, options);
      } catch (error) {
        // Invalid UTF-8 already names the file and the byte.
        if (isChatloadError(error)) throw new ConfigError(`${config.file}: text_files: ${error.message}`, { cause: error });
        const code = (error as NodeJS.ErrnoException).code;
        throw new ConfigError(`${config.file}: text_files: cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`, { cause: error });
      }
    }),
  );
}

/**
 * Checks every sampled size against the config's bounds as generation samples them, before any text is made, and
 * adds them up: one message over `messageTokens`, or a dataset over `totalTokens`, is a ConfigError naming the field.
 */
class SizeCheck {
  readonly #config: GenerationConfig;
  #total = 0;

  constructor(config: GenerationConfig) {
    this.#config = config;
  }

  /** One message's size sampled from `field` (e.g. `prompt_input.num_tokens`), added to the dataset's total. */
  message(tokens: number, field: string, d: Distribution): number {
    const bound = this.#config.bounds.messageTokens;
    if (tokens > bound) {
      throw new ConfigError(`${this.#config.file}: ${field}: a sample of ${formatCount(tokens)} tokens from ${d.describe} is over the bound of ${formatCount(bound)} tokens per message; give the distribution a "max"`);
    }
    this.#total += tokens;
    const totalBound = this.#config.bounds.totalTokens;
    if (this.#total > totalBound) {
      throw new ConfigError(`${this.#config.file}: the dataset would hold more than ${formatCount(totalBound)} tokens (the bound of a generated dataset); generate fewer or shorter conversations`);
    }
    return tokens;
  }

  /** One conversation's message count, sampled from `prompt_input.num_turns`. */
  turns(count: number): number {
    const bound = this.#config.bounds.generatedTurns;
    if (count > bound) {
      throw new ConfigError(`${this.#config.file}: prompt_input.num_turns: a sample of ${formatCount(count)} messages from ${this.#config.numTurns.describe} is over the bound of ${formatCount(bound)} per conversation; give the distribution a "max"`);
    }
    return count;
  }
}

/** Options of generateConversations. */
export interface GenerateOptions extends Utf8ReadOptions {
  counter: TokenCounter;
  /** @default 0 */
  seed?: number;
}

/** The sampled sizes of one conversation's user turns. */
interface TurnPlan {
  inputs: number[];
  outputs: number[];
  thinks: number[] | undefined;
}

/**
 * Generates the conversations of a `generate_conversations` config, as the reference builds them (REFERENCE.md
 * and docs/DATASETS.md), with exact token counts: each user message is realized by slicing corpus ids and
 * re-encoding until its count equals the sampled size. Deterministic for a seed, a config and a tokenizer.
 */
export async function generateConversations(config: GenerationConfig, options: GenerateOptions): Promise<GeneratedDataset> {
  const stream = new TokenStream(decodingTokenizer(options.counter.tokenizer), await readCorpus(config, options));
  const tokenizer = stream.tokenizer;
  const rng = Rng.derive(options.seed ?? 0, GENERATOR_STREAM);
  const n = config.numConversations;
  const count = (text: string): number => tokenizer.count(text);
  const baseCount = count(BASE_PROMPT);
  const sizes = new SizeCheck(config);

  // Sampling order follows the reference: turns and prefixes per conversation, then one common-prefix length. Every
  // size is sampled and checked before any text is realized, so a config over the bounds fails at once.
  const turnCounts = sampleMany(config.numTurns, rng, n).map((x) => {
    const t = Math.max(2, toInt(x));
    return sizes.turns(t + (t % 2));
  });
  const prefixTokens = sampleMany(config.prefixNumTokens, rng, n).map((x) => sizes.message(Math.max(0, toInt(x)), 'prompt_input.prefix_num_tokens', config.prefixNumTokens));
  const commonTokens = Math.max(0, toInt(sampleMany(config.commonPrefixNumTokens, rng, 1)[0] ?? 0));
  // The common prefix opens every conversation's first message.
  for (let c = 0; c < n; c++) sizes.message(commonTokens, 'prompt_input.common_prefix_num_tokens', config.commonPrefixNumTokens);
  const system = systemPrompts(config, stream, rng, n, sizes);
  const plans: TurnPlan[] = [];
  for (let c = 0; c < n; c++) {
    const userCount = turnCounts[c]! / 2;
    plans.push({
      inputs: sampleMany(config.numTokens, rng, userCount).map((x) => sizes.message(Math.max(toInt(x), baseCount), 'prompt_input.num_tokens', config.numTokens)),
      outputs: sampleMany(config.outputNumTokens, rng, userCount).map((x) => sizes.message(Math.max(toInt(x), 1), 'prompt_output.num_tokens', config.outputNumTokens)),
      thinks: config.thinkTime === undefined ? undefined : sampleMany(config.thinkTime, rng, userCount).map((x) => Math.max(0, x)),
    });
  }

  let offset = 0;
  let commonText = '';
  if (commonTokens > 0) {
    // As the reference: the stream's first tokens, ending with "." to close the sentence.
    commonText = `${stream.text(0, Math.max(0, commonTokens - 2))}.`;
    offset += commonTokens;
  }

  const answerCache = new Map<number, { text: string; tokens: number }>();
  const answer = (tokens: number): { text: string; tokens: number } => {
    let hit = answerCache.get(tokens);
    if (hit === undefined) {
      // Answers come from the start of the stream, as in the reference: only their length matters (max_tokens).
      const r = realize(stream, [{ start: 0, count: tokens }], 0, tokens);
      hit = { text: r.text, tokens: r.tokens };
      answerCache.set(tokens, hit);
    }
    return hit;
  };

  const conversations: Conversation[] = [];
  const userTurns: TurnTokens[][] = [];
  const answerTokens: number[][] = [];
  let maxDrift = 0;
  for (let c = 0; c < n; c++) {
    const userCount = turnCounts[c]! / 2;
    const { inputs, outputs, thinks } = plans[c]!;
    const largest = Math.max(...inputs);
    const header = conversationHeader(c);
    const messages: ChatMessage[] = [];
    const turns: TurnSettings[] = [];
    const turnTokens: TurnTokens[] = [];
    const answers: number[] = [];
    const systemText = system(c);
    if (systemText !== undefined) messages.push({ role: 'system', content: systemText });
    const prefix = prefixTokens[c]!;
    const prefixStart = offset;
    offset += prefix;
    for (let t = 0; t < userCount; t++) {
      const head = t === 0 ? commonText + header : header;
      const segments: Segment[] = [{ text: head }];
      let sampled = inputs[t]!;
      let fixed = count(head) + baseCount;
      let prefixSlice = -1;
      if (t === 0 && prefix > 0) {
        // The conversation's own prefix comes on top of num_tokens; its "{i}, " marker is part of it.
        const marker = `${c}, `;
        const markerTokens = count(marker);
        segments.push({ text: marker });
        prefixSlice = segments.length;
        segments.push({ start: prefixStart, count: Math.max(0, prefix - markerTokens) });
        sampled += prefix;
        fixed += prefix;
      }
      segments.push({ text: BASE_PROMPT });
      const fillerCount = sampled - fixed;
      segments.push({ start: offset + t * largest, count: Math.max(0, fillerCount) });
      const target = Math.max(sampled, fixed);
      // Adjust the filler; when there is none (the fixed parts fill the turn), adjust the prefix instead.
      const adjust = fillerCount > 0 || prefixSlice === -1 ? segments.length - 1 : prefixSlice;
      const r = realize(stream, segments, adjust, target);
      maxDrift = Math.max(maxDrift, Math.abs(r.drift));
      messages.push({ role: 'user', content: r.text });
      turnTokens.push({ sampled, target, actual: r.tokens });
      const a = answer(outputs[t]!);
      messages.push({ role: 'assistant', content: a.text });
      answers.push(a.tokens);
      const settings: TurnSettings = { maxTokens: outputs[t]! };
      if (thinks !== undefined && t > 0) settings.thinkTimeSec = thinks[t]!;
      turns.push(settings);
    }
    // As the reference: the next conversation's text starts a little further on.
    offset += turnCounts[c]!;
    conversations.push({ id: `CONV_ID_${c}`, messages, turns });
    userTurns.push(turnTokens);
    answerTokens.push(answers);
  }
  if (config.images !== undefined) addSyntheticImages(conversations, config.images, options.seed ?? 0);
  return { conversations, userTurns, answerTokens, commonPrefixTokens: commonTokens, maxDrift, corpusTokens: stream.length };
}

/** The system prompt text per conversation index (undefined when the config has none). Sizes are sampled and checked at once. */
function systemPrompts(config: GenerationConfig, stream: TokenStream, rng: Rng, n: number, check: SizeCheck): (c: number) => string | undefined {
  const spec = config.systemPrompt;
  if (spec === undefined) return () => undefined;
  if (spec.kind === 'text') return () => spec.text;
  const tokens = (d: Distribution, k: number): number[] => sampleMany(d, rng, k).map((x) => check.message(Math.max(1, toInt(x)), 'system_prompt.num_tokens', d));
  // System prompt text is taken from the far side of the stream so it does not repeat the common prefix.
  const from = Math.floor(stream.length / 2);
  if (spec.shared) {
    const size = tokens(spec.numTokens, 1)[0]!;
    // It is in every conversation's messages.
    for (let c = 1; c < n; c++) check.message(size, 'system_prompt.num_tokens', spec.numTokens);
    const text = realize(stream, [{ start: from, count: size }], 0, size).text;
    return () => text;
  }
  const sizes = tokens(spec.numTokens, n);
  return (c) => realize(stream, [{ start: from + c * 7919, count: sizes[c]! }], 0, sizes[c]!).text;
}
