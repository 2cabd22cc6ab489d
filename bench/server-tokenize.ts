// What asking the server for its token ids costs (issue #30): `chatload run --tokenizer server` against
// `--tokenizer approx` (local ids) on the same llama.cpp-like test server (test/helpers/llamacpp-slots-server.ts, its
// /apply-template and /tokenize), in alternating rounds of one run. Reports, per chat request, the server's extra
// calls and the bytes they carry (as a ratio to the chat requests' own bytes), and the client's CPU (all threads,
// rusage of the chatload child) and median TTFT as ratios of the server-ids runs to the local-ids runs.
// `node --import tsx bench/server-tokenize.ts [conversations] [rounds]`
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestRecord } from '../src/metrics/record.js';
import { startLlamacppSlotsServer } from '../test/helpers/llamacpp-slots-server.js';
import { CHATLOAD_BIN } from './all-in.js';
import { median, nodeCost } from './child-cpu.js';

const CONVERSATIONS = Number(process.argv[2] ?? 16);
const ROUNDS = Number(process.argv[3] ?? 3);
const dir = join(tmpdir(), `chatload-bench-server-tokenize-${process.pid}`);

/** 16 conversations of 6 turns sharing a 300-token system prompt, each with 400 tokens of its own. */
function writeConfig(): string {
  const path = join(dir, 'generate.json');
  writeFileSync(
    path,
    JSON.stringify({
      filetype: 'generate_conversations',
      num_conversations: CONVERSATIONS,
      print_stats: false,
      prompt_input: {
        num_turns: { distribution: 'constant', value: 12 },
        common_prefix_num_tokens: { distribution: 'constant', value: 300 },
        prefix_num_tokens: { distribution: 'constant', value: 400 },
        num_tokens: { distribution: 'uniform', min: 60, max: 100 },
      },
      prompt_output: { num_tokens: { distribution: 'uniform', min: 30, max: 60 } },
    }),
  );
  return path;
}

interface Round {
  cpuMs: number;
  ttftP50Ms: number;
  chats: number;
  chatBytes: number;
  extraCalls: number;
  extraBytes: number;
}

async function round(tokenizer: 'server' | 'approx', config: string, index: number): Promise<Round> {
  const server = await startLlamacppSlotsServer({ slots: 4, delayMs: 1 });
  const out = join(dir, `${tokenizer}-${index}`);
  try {
    const args = [CHATLOAD_BIN, 'run', '-u', server.url, '-m', 'qwen3-tiny', '-i', config, '-p', '4', '--no-early-stop', '--tokenizer', tokenizer, '--output-dir', out, '--no-report'];
    const cost = await nodeCost(args, { timeoutMs: 240_000 });
    if (cost.code !== 0) throw new Error(`chatload exited ${cost.code}: ${cost.stderr.slice(-400)}`);
    const records = readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as RequestRecord);
    const of = (key: string): { calls: number; bodyBytes: number } => server.traffic.get(key) ?? { calls: 0, bodyBytes: 0 };
    const chat = of('POST /v1/chat/completions');
    const extra = [of('POST /apply-template'), of('POST /tokenize')];
    return {
      cpuMs: cost.cpuMs,
      ttftP50Ms: median(records.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms]))),
      chats: chat.calls,
      chatBytes: chat.bodyBytes,
      extraCalls: extra.reduce((n, t) => n + t.calls, 0),
      extraBytes: extra.reduce((n, t) => n + t.bodyBytes, 0),
    };
  } finally {
    await server.close();
    rmSync(out, { recursive: true, force: true });
  }
}

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
try {
  const config = writeConfig();
  const local: Round[] = [];
  const serverIds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    local.push(await round('approx', config, i));
    serverIds.push(await round('server', config, i));
  }
  const m = (rounds: Round[], f: (r: Round) => number): number => median(rounds.map(f));
  const fmt = (x: number, digits = 2): string => x.toFixed(digits);
  console.log(`${CONVERSATIONS} conversations x 6 turns, -p 4, ${ROUNDS} alternating rounds (medians over rounds)`);
  console.log('ids        chat requests   extra calls/request   extra bytes / chat bytes   client CPU ms   TTFT p50 ms');
  for (const [name, rounds] of [['local', local], ['server', serverIds]] as const) {
    console.log(
      `${name.padEnd(10)} ${String(m(rounds, (r) => r.chats)).padStart(13)}   ${fmt(m(rounds, (r) => r.extraCalls / r.chats)).padStart(19)}   ` +
        `${fmt(m(rounds, (r) => r.extraBytes / r.chatBytes)).padStart(24)}   ${fmt(m(rounds, (r) => r.cpuMs), 0).padStart(13)}   ${fmt(m(rounds, (r) => r.ttftP50Ms)).padStart(11)}`,
    );
  }
  const ratios = serverIds.map((r, i) => r.cpuMs / local[i]!.cpuMs);
  const ttft = serverIds.map((r, i) => r.ttftP50Ms / local[i]!.ttftP50Ms);
  console.log(`client CPU, server ids / local ids: ${fmt(median(ratios))}x (rounds ${ratios.map((x) => fmt(x)).join(', ')})`);
  console.log(`TTFT p50, server ids / local ids: ${fmt(median(ttft))}x (rounds ${ttft.map((x) => fmt(x)).join(', ')})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
