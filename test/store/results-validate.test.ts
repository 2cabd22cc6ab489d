// results.json and requests.jsonl records validate against the published schemas (issue #32, part 2), for every way
// chatload writes them: a run, a merge of two shards, a resumed run and a --workers 2 run, each a real run against the
// simulator over loopback. Validated with ajv (draft-07, what ts-json-schema-generator emits) against a strict copy of
// each schema: every object closed (additionalProperties: false), so a field written but not in the types fails too.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import { mergeRuns } from '../../src/benchmark/merge.js';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { RESULTS_SCHEMA_VERSION } from '../../src/store/schema-version.js';
import { REPO_ROOT } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

/** The schema with every object that lists its properties closed to others. */
function closed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closed);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = key === 'properties' ? Object.fromEntries(Object.entries(child as object).map(([k, v]) => [k, closed(v)])) : closed(child);
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const ajv = new Ajv({ allErrors: true, strictTypes: false });
const validator = (file: string, strict: boolean): ValidateFunction => {
  const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schema', file), 'utf8')) as object;
  return ajv.compile(strict ? (closed(schema) as object) : schema);
};
const results = validator('results.schema.json', true);
const record = validator('record.schema.json', true);
const publishedResults = validator('results.schema.json', false);

/** Asserts that a results folder's results.json and every record of its requests.jsonl validate. */
function assertValid(dir: string, what: string): Record<string, unknown> {
  const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(doc.schema_version, RESULTS_SCHEMA_VERSION, `${what}: schema_version`);
  assert.ok(results(doc), `${what}: results.json: ${ajv.errorsText(results.errors, { separator: '\n' })}`);
  assert.ok(publishedResults(doc), `${what}: the published (open) schema`);
  const records = readRequestsJsonl(join(dir, 'requests.jsonl'));
  assert.ok(records.length > 0, `${what}: records`);
  for (const [i, r] of records.entries()) assert.ok(record(r), `${what}: requests.jsonl record ${i}: ${ajv.errorsText(record.errors)}`);
  return doc;
}

const work = tempDir('results-validate');
after(() => rmSync(work, { recursive: true, force: true }));

describe('results.json and requests.jsonl against the published schemas', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
  });
  after(async () => {
    await sim.close();
  });
  const base = (): { url: string; numClients: number; report: boolean } => ({ url: sim.url, numClients: 3, report: false });

  test('a run', { timeout: 90_000 }, async () => {
    const out = join(work, 'run');
    await runBenchmark({ ...base(), maxNumRequests: 12, outputDir: out });
    const doc = assertValid(out, 'run');
    assert.equal(doc.stop_reason, 'max_requests');
    // A field of the wrong type fails: the check is not vacuous.
    assert.equal(results({ ...doc, completed: 'twelve' }), false);
    assert.equal(results({ ...doc, unknown_field: 1 }), false, 'the strict copy refuses a field the types do not name');
    assert.equal(publishedResults({ ...doc, unknown_field: 1 }), true, 'the published schema accepts fields a later minor adds');
  });

  test('a merge of two shards', { timeout: 120_000 }, async () => {
    const shards = [0, 1].map((i) => join(work, `shard-${i}`));
    for (const [i, out] of shards.entries()) await runBenchmark({ ...base(), maxNumRequests: 8, shard: `${i}/2`, outputDir: out });
    for (const [i, out] of shards.entries()) assertValid(out, `shard ${i}`);
    const merged = join(work, 'merged');
    await mergeRuns(shards, merged);
    const doc = assertValid(merged, 'merge');
    assert.equal((doc.merged_from as unknown[]).length, 2);
  });

  test('a resumed run', { timeout: 120_000 }, async () => {
    const out = join(work, 'resumed');
    const options = { ...base(), maxNumRequests: 16, earlyStop: false, stopGraceSec: 0.2, outputDir: out };
    const interrupt = new AbortController();
    let seen = 0;
    const first = await runBenchmark(options, { signal: interrupt.signal, observer: { onRecord: () => (++seen === 4 ? interrupt.abort() : undefined) } });
    assert.equal(first.load.stopReason, 'interrupted');
    assertValid(out, 'interrupted run');
    const before = readRequestsJsonl(join(out, 'requests.jsonl')).length;
    await runBenchmark({ ...options, resume: true });
    const doc = assertValid(out, 'resumed run');
    // Its summary counts both runs' records (the interrupted run's aborted requests among them).
    const { completed, failed } = doc.summary as { completed: number; failed: number };
    assert.equal(completed + failed, readRequestsJsonl(join(out, 'requests.jsonl')).filter((r) => !r.warmup).length);
    assert.ok(completed > before, 'the resumed run added records');
  });

  test('a --workers 2 run', { timeout: 120_000 }, async () => {
    const out = join(work, 'workers');
    await runBenchmark({ ...base(), maxNumRequests: 12, workers: 2, outputDir: out });
    const doc = assertValid(out, 'workers');
    assert.equal(doc.workers, 2);
    assert.equal((doc.worker_health as unknown[]).length, 2);
  });
});
