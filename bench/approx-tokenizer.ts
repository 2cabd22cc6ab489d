// Benchmark: the approximate tokenizer's cost per token (src/tokenizer/approx.ts), which every run pays on what is new
// in each turn (the user's message, the answer into the expected-cache model) and the simulator on every prompt.
// The shipped tokenizer against a baseline version of approx.ts (--baseline REV, a git revision; default 82ecc30, the
// tree before the hand-written ASCII path, which found every piece's end with the regex), in the same process,
// alternating, on three texts of ~1 MB: English prose and JSON (ASCII), and prose in French, Chinese and Russian
// (mostly not ASCII: there the regex decides, as before). It first checks that both give the same ids.
//
//   node --import tsx bench/approx-tokenizer.ts [--baseline REV] [--rounds 7]
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { approxTokenizer } from '../src/tokenizer/approx.js';
import { IdSink } from '../src/tokenizer/id-sink.js';
import type { Tokenizer } from '../src/tokenizer/types.js';
import { Rng } from '../src/util/rng.js';
import { median } from './child-cpu.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const BASELINE = arg('--baseline') ?? '82ecc30';
const ROUNDS = Number(arg('--rounds') ?? 7);
const root = fileURLToPath(new URL('..', import.meta.url));

/** The baseline's approx.ts, from git, imported on its own (it imports types only). */
async function baselineTokenizer(rev: string): Promise<Tokenizer> {
  const dir = mkdtempSync(join(tmpdir(), 'chatload-bench-approx-'));
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(rev)} src/tokenizer/approx.ts | tar -x -C ${JSON.stringify(dir)}`], { cwd: root });
  const module = (await import(pathToFileURL(join(dir, 'src/tokenizer/approx.ts')).href)) as { approxTokenizer: Tokenizer };
  return module.approxTokenizer;
}

/** ~`chars` characters of words drawn from `words`, with punctuation and line breaks, seeded. */
function prose(words: readonly string[], chars: number, seed: number): string {
  const rng = new Rng(seed);
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const word = words[Math.floor(rng.next() * words.length)]!;
    const r = rng.next();
    const piece = r < 0.08 ? `${word}, ` : r < 0.12 ? `${word}.\n` : r < 0.14 ? `${word}'s ` : `${word} `;
    out.push(piece);
    length += piece.length;
  }
  return out.join('');
}

const english = 'the of and to in is that it for was on are as with his they at be this from have or by one had not but what all were when we there can an which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(' ');
const other = 'été déjà très où français naïveté cœur façon élève 中文 字符 测试 模型 服务器 缓存 请求 Привет мир данные сервер модель кэш запрос ответ'.split(' ');
const json = JSON.stringify(
  Array.from({ length: 4000 }, (_, i) => ({ id: `call_${i}`, type: 'function', function: { name: `get_weather_${i % 17}`, arguments: { city: english[i % english.length], days: i % 7, units: 'metric' } } })),
  null,
  2,
);
const texts: Array<[string, string]> = [
  ['English prose (ASCII)', prose(english, 1_000_000, 1)],
  ['JSON, indented (ASCII)', json.slice(0, 1_000_000)],
  ['French, Chinese, Russian', prose(other, 1_000_000, 2)],
];

const baseline = await baselineTokenizer(BASELINE);
for (const [name, text] of texts) {
  const a = approxTokenizer.encode(text);
  const b = baseline.encode(text);
  if (a.length !== b.length || a.some((id, i) => id !== b[i])) throw new Error(`${name}: the shipped tokenizer's ids differ from ${BASELINE}'s`);
}

/** ns per token of one count() of `text`, or of encodeTo() into a fresh IdSink (as the expected-cache model encodes). */
function nsPerToken(tokenizer: Tokenizer, text: string, how: 'count' | 'encodeTo'): number {
  const started = performance.now();
  let tokens: number;
  if (how === 'count') tokens = tokenizer.count(text);
  else {
    const sink = new IdSink(1024);
    tokenizer.encodeTo!(text, sink);
    tokens = sink.length;
  }
  return ((performance.now() - started) * 1e6) / tokens;
}

console.log(`approximate tokenizer, ns per token (median of ${ROUNDS} rounds, alternating; ids checked equal first)`);
console.log(`| text | tokens | call | this tree | ${BASELINE} | ratio |\n| --- | --- | --- | --- | --- | --- |`);
for (const [name, text] of texts) {
  for (const how of ['count', 'encodeTo'] as const) {
    nsPerToken(approxTokenizer, text, how);
    nsPerToken(baseline, text, how);
    const now: number[] = [];
    const before: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each goes first in every other round, so a drift in the machine's load does not favour one.
      const pair = [() => now.push(nsPerToken(approxTokenizer, text, how)), () => before.push(nsPerToken(baseline, text, how))];
      if (round % 2 === 1) pair.reverse();
      for (const measure of pair) measure();
    }
    console.log(`| ${name} | ${approxTokenizer.count(text).toLocaleString('en-US')} | ${how}() | ${median(now).toFixed(1)} ns | ${median(before).toFixed(1)} ns | ${(median(now) / median(before)).toFixed(2)}x |`);
  }
}
