import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { statsOfTraceFile, type TraceStatsFlags } from '../../src/cli/trace.js';
import { runTraceSynthesize, type TraceSynthesizeFlags } from '../../src/cli/trace-synthesize.js';
import { DatasetError } from '../../src/errors/index.js';
import type { TraceStats } from '../../src/synth/trace-stats.js';
import { FIXTURES } from '../helpers/tokenizers.js';
import { tempDir } from '../helpers/tmp.js';
import { writeMooncakeTrace } from '../helpers/traces.js';

/*
 * `trace synthesize` tested by its output's `trace stats`: the rate, the mean lengths and the theoretical hit ratio
 * move as asked.
 */

const B = 16;

function stats(file: string, blockSize?: number): Promise<TraceStats> {
  const flags: TraceStatsFlags = { json: false, allowInvalidUtf8: false, traceBlockSize: blockSize };
  return statsOfTraceFile(file, flags);
}

async function synthesize(input: string, output: string, flags: Partial<TraceSynthesizeFlags> = {}): Promise<TraceStats> {
  await runTraceSynthesize(input, { output, rateScale: 1, islScale: 1, oslScale: 1, seed: 0, allowInvalidUtf8: false, ...flags });
  return stats(output, flags.traceBlockSize);
}

/** `actual` within `relative` of `expected`. */
function near(actual: number, expected: number, relative: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${what}: ${actual} vs ${expected} (±${relative * 100}%)`);
}

describe('trace synthesize: Mooncake and Bailian (hash ids)', () => {
  const dir = tempDir('synth-hash');
  // 2,000 rows over 10 s, a session of 3 turns every 7th row, shared prefixes of 1-4 blocks: hit ratio about 48%.
  const trace = writeMooncakeTrace(dir, { rows: 2000, blockSize: B, gapMs: 5, sessionEvery: 7, turns: 3, seed: 3 });

  test('rate x3, ISL x1.5, OSL x2: the stats follow, and the prefix structure is kept', async () => {
    const before = await stats(trace, B);
    const after = await synthesize(trace, join(dir, 'scaled.jsonl'), { traceBlockSize: B, rateScale: 3, islScale: 1.5, oslScale: 2, seed: 1 });
    assert.equal(after.requests, before.requests);
    assert.equal(after.sessions, before.sessions);
    // Times are written to the microsecond: over a span of 3.3 s the rate moves by 1e-6 at most.
    near(after.meanRatePerSec, 3 * before.meanRatePerSec, 1e-6, 'rate');
    // Lengths round at random (mean kept): the sum's error is about 0.5 sqrt(n) tokens, under 0.1% here; 1% is loose.
    near(after.inputLength!.mean, 1.5 * before.inputLength!.mean, 0.01, 'mean ISL');
    near(after.outputLength!.mean, 2 * before.outputLength!.mean, 0.01, 'mean OSL');
    // Each old block becomes 1.5 new ones: shared prefixes scale with the prompts, so the ratio moves only by the
    // rounding of partial blocks (a few points with 16-token blocks and 3-4 block prompts).
    assert.ok(before.infinite.hitRatio > 0.3);
    assert.ok(Math.abs(after.infinite.hitRatio - before.infinite.hitRatio) < 0.05, `${after.infinite.hitRatio} vs ${before.infinite.hitRatio}`);
  });

  test('--prefix-share F: the theoretical hit ratio of the output is F', async () => {
    for (const share of [0, 0.3, 0.75]) {
      const after = await synthesize(trace, join(dir, `share-${share}.jsonl`), { traceBlockSize: B, prefixShare: share, islScale: 1.2, seed: 2 });
      // The hits stay within half a block of F x the input so far at each request (past the first, which cannot hit):
      // a block of 16 tokens over 170,000 input tokens is 1e-4.
      assert.ok(Math.abs(after.infinite.hitRatio - share) < 1e-3, `share ${share}: ${after.infinite.hitRatio}`);
    }
  });

  test('the same seed writes the same bytes; another seed rounds differently', async () => {
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    const c = join(dir, 'c.jsonl');
    await synthesize(trace, a, { traceBlockSize: B, islScale: 1.3, prefixShare: 0.4, seed: 5 });
    await synthesize(trace, b, { traceBlockSize: B, islScale: 1.3, prefixShare: 0.4, seed: 5 });
    await synthesize(trace, c, { traceBlockSize: B, islScale: 1.3, prefixShare: 0.4, seed: 6 });
    assert.equal(readFileSync(a, 'utf8'), readFileSync(b, 'utf8'));
    assert.notEqual(readFileSync(a, 'utf8'), readFileSync(c, 'utf8'));
  });

  test('a Bailian trace keeps its format, its sessions and its other fields', async () => {
    const input = join(FIXTURES, 'bailian-sample.jsonl');
    const out = join(dir, 'bailian.jsonl');
    const before = await stats(input);
    const after = await synthesize(input, out, { rateScale: 2 });
    assert.equal(after.format, 'bailian');
    assert.equal(after.sessions, before.sessions);
    near(after.meanRatePerSec, 2 * before.meanRatePerSec, 1e-6, 'rate');
    assert.equal(after.infinite.hitRatio, before.infinite.hitRatio);
    const first = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(first), ['chat_id', 'parent_chat_id', 'timestamp', 'input_length', 'output_length', 'type', 'turn', 'hash_ids']);
  });
});

describe('trace synthesize: Azure and BurstGPT (no prefix structure)', () => {
  const dir = tempDir('synth-csv');

  test('Azure: rate x4 and ISL x2, times written exactly in the trace\'s own style', async () => {
    for (const name of ['azure-2023-sample.csv', 'azure-2024-sample.csv']) {
      const input = join(FIXTURES, name);
      const out = join(dir, name);
      const before = await stats(input);
      const after = await synthesize(input, out, { rateScale: 4, islScale: 2 });
      // Times are written to the trace's own unit (100 ns or 1 us): the duration moves by one unit at most.
      assert.ok(Math.abs(after.durationSec - before.durationSec / 4) <= 1e-6, `${after.durationSec} vs ${before.durationSec / 4}`);
      assert.equal(after.inputLength!.mean, 2 * before.inputLength!.mean);
      assert.equal(after.outputLength!.mean, before.outputLength!.mean);
      const [inHead, inFirst] = readFileSync(input, 'utf8').split('\n');
      const [outHead, outFirst, outSecond] = readFileSync(out, 'utf8').split('\n');
      assert.equal(outHead, inHead);
      assert.equal(outFirst!.split(',')[0], inFirst!.split(',')[0], 'the first request stays where it was');
      assert.equal(outSecond!.split(',')[0]!.length, inFirst!.split(',')[0]!.length, 'same digits and zone');
    }
  });

  test('BurstGPT: OSL x2; failed requests stay failed (0), Total tokens is the sum, Model and Log Type kept', async () => {
    const input = join(FIXTURES, 'burstgpt-sample.csv');
    const out = join(dir, 'burstgpt.csv');
    const before = await stats(input);
    const after = await synthesize(input, out, { rateScale: 2, oslScale: 2 });
    assert.deepEqual(after.rows, before.rows);
    near(after.meanRatePerSec, 2 * before.meanRatePerSec, 1e-9, 'rate');
    assert.equal(after.outputLength!.mean, 2 * before.outputLength!.mean);
    const rows = readFileSync(out, 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
    const inRows = readFileSync(input, 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
    rows.forEach((r, i) => {
      assert.equal(Number(r[4]), Number(r[2]) + Number(r[3]));
      assert.deepEqual([r[1], r[5]], [inRows[i]![1], inRows[i]![5]]);
    });
  });

  test('--prefix-share on a trace with no hash ids is refused, and a failed synthesis leaves OUT as it was', async () => {
    const out = join(dir, 'kept.csv');
    writeFileSync(out, 'old\n');
    await assert.rejects(runTraceSynthesize(join(FIXTURES, 'azure-2023-sample.csv'), { output: out, rateScale: 1, islScale: 1, oslScale: 1, seed: 0, prefixShare: 0.5, allowInvalidUtf8: false }), /--prefix-share: this Azure trace carries no prefix structure/);
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,10,2\n2023-11-16 18:15:47.0000000,ten,2\n');
    await assert.rejects(runTraceSynthesize(bad, { output: out, rateScale: 2, islScale: 1, oslScale: 1, seed: 0, allowInvalidUtf8: false }), (e: unknown) => e instanceof DatasetError && /bad\.csv, line 3: ContextTokens/.test(e.message));
    assert.equal(readFileSync(out, 'utf8'), 'old\n');
    assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp')), [], 'no temporary file left');
  });
});
