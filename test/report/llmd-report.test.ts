// --llmd-report (issue #32, part 4): llm-d-benchmark's benchmark report v0.2 from a real run against the built-in
// simulator, validated with ajv against llm-d's published JSON Schema (test/fixtures/llmd/README.md: which files, which
// commit), plus the units its pydantic models check (schema_v0_2.py's check_units validators, which the JSON Schema
// does not carry), and its figures checked against the run's results.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { llmdReportText } from '../../src/report/llmd-report.js';
import { UUID_NAMESPACE_URL, uuid5 } from '../../src/util/uuid5.js';
import { runCli } from '../helpers/cli.js';
import { repoPath } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** llm-d's v0.2 JSON Schema with the session_performance definitions its v0.2 pydantic models have (README.md). */
function brSchema(): Json {
  const schema = JSON.parse(readFileSync(repoPath('test/fixtures/llmd/br_v0_2_json_schema.json'), 'utf8')) as Json;
  const session = JSON.parse(readFileSync(repoPath('test/fixtures/llmd/br_v0_2_session_performance.json'), 'utf8')) as Json;
  schema.$defs.SessionPerformance = session.SessionPerformance;
  schema.$defs.SessionRequests = session.SessionRequests;
  schema.$defs.Results.properties.session_performance = session['Results.properties.session_performance'];
  return schema;
}

function validator(): (value: unknown) => string[] {
  // RFC 3339 date-times, as pydantic's datetime accepts them (ajv-formats is not installed).
  const ajv = new Ajv2020({ allErrors: true, strict: false, formats: { 'date-time': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/ } });
  const validate = ajv.compile(brSchema());
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
}

// schema_v0_2.py's unit lists (base.py's UNITS_*) and which field takes which, as its check_units validators say.
const UNITS_QUANTITY = ['count', 'pixels'];
const UNITS_TIME = ['ms', 's'];
const UNITS_GEN_LATENCY = ['ms/token', 's/token'];
const UNITS_GEN_THROUGHPUT = ['tokens/s'];
const UNITS_REQUEST_THROUGHPUT = ['queries/s'];
const UNITS_PORTION = ['percent', 'fraction'];
const UNIT_RULES: Array<[string, string[]]> = [
  ['results.request_performance.aggregate.requests.input_length', UNITS_QUANTITY],
  ['results.request_performance.aggregate.requests.output_length', UNITS_QUANTITY],
  ['results.request_performance.aggregate.latency.time_to_first_token', UNITS_TIME],
  ['results.request_performance.aggregate.latency.time_per_output_token', UNITS_GEN_LATENCY],
  ['results.request_performance.aggregate.latency.inter_token_latency', UNITS_GEN_LATENCY],
  ['results.request_performance.aggregate.latency.request_latency', UNITS_TIME],
  ['results.request_performance.aggregate.throughput.input_token_rate', UNITS_GEN_THROUGHPUT],
  ['results.request_performance.aggregate.throughput.output_token_rate', UNITS_GEN_THROUGHPUT],
  ['results.request_performance.aggregate.throughput.total_token_rate', UNITS_GEN_THROUGHPUT],
  ['results.request_performance.aggregate.throughput.request_rate', UNITS_REQUEST_THROUGHPUT],
  ['results.session_performance.sessions.session_rate', UNITS_REQUEST_THROUGHPUT],
  ['results.session_performance.sessions.session_duration', UNITS_TIME],
  ['results.session_performance.sessions.events_per_session', UNITS_QUANTITY],
  ['results.session_performance.sessions.input_tokens_per_session', UNITS_QUANTITY],
  ['results.session_performance.sessions.output_tokens_per_session', UNITS_QUANTITY],
  // The simulator reports cached tokens: the server's hit rate is on its component.
  ['results.observability.components.0.aggregate.cache_hit_rate', UNITS_PORTION],
];

const at = (doc: Json, path: string): any => path.split('.').reduce<any>((v, k) => v?.[k], doc); // eslint-disable-line @typescript-eslint/no-explicit-any

describe('--llmd-report', { timeout: 240_000 }, () => {
  test("a run's report validates against llm-d's BR v0.2 schema and carries the run's figures", async () => {
    const dir = tempDir('llmd-report');
    const out = join(dir, 'run');
    const file = join(dir, 'benchmark_report_v0.2,_results.json.yaml');
    const result = await runCli(['run', '-n', '40', '--api-key', 'sk-do-not-leak-42', '--output-dir', out, '--llmd-report', file, '--progress', 'off', '-q'], {
      timeoutMs: 200_000,
      env: { LLMDBENCH_RUN_EXPERIMENT_ID: 'chatload-1700000000-abc', LLMDBENCH_DESCRIPTION_KEYWORDS: 'multi-turn, sim' },
    });
    assert.equal(result.code, 0, result.stderr);
    const text = readFileSync(file, 'utf8');
    const doc = JSON.parse(text) as Json;
    assert.deepEqual(validator()(doc), []);
    for (const [path, units] of UNIT_RULES) {
      const stats = at(doc, path);
      assert.ok(stats !== undefined, `${path} is present`);
      assert.ok(units.includes(stats.units), `${path}: units ${stats.units}, expected one of ${units.join(' ')}`);
    }
    assert.equal(doc.version, '0.2');
    assert.doesNotMatch(text, /sk-do-not-leak-42/);
    // Python's uuid.uuid5(uuid.NAMESPACE_URL, 'chatload-1700000000-abc'), as llm-d's converters make run.eid.
    assert.equal(doc.run.eid, '8e9823fa-1769-5a2c-b5ff-6f691ad56d51');
    assert.deepEqual(doc.run.keywords, ['multi-turn', 'sim']);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Json;
    const s = results.summary;
    const aggregate = doc.results.request_performance.aggregate;
    assert.equal(aggregate.requests.total, s.requests);
    assert.equal(aggregate.requests.total, 40);
    assert.equal(aggregate.requests.failures, s.failed - s.failed_by_kind.aborted);
    assert.equal(aggregate.latency.time_to_first_token.p50, s.metrics.ttft_ms.p50);
    assert.equal(aggregate.latency.request_latency.p99p9, s.metrics.e2el_ms.p99_9);
    assert.equal(aggregate.throughput.request_rate.mean, s.request_throughput);
    const sessions = doc.results.session_performance.sessions;
    const c = results.conversations;
    assert.equal(sessions.total, c.completed + c.failed + c.unfinished);
    assert.equal(sessions.total_events_completed, s.completed);
    assert.equal(sessions.events_per_session.max, Math.max(...results.per_conversation.map((p: Json) => p.turns_completed + p.turns_failed)));
    assert.equal(doc.scenario.load.standardized.tool, 'chatload');
    assert.equal(doc.scenario.load.native.args.apiKey, '[redacted]');
  });

  test('--repeat writes one report per repetition, named as llm-d names a results file\'s stages', async () => {
    const dir = tempDir('llmd-report-repeat');
    const file = join(dir, 'benchmark_report.yaml');
    const result = await runCli(['run', '-n', '4', '--repeat', '2', '--output-dir', join(dir, 'run'), '--llmd-report', file, '--progress', 'off', '-q'], { timeoutMs: 200_000 });
    assert.equal(result.code, 0, result.stderr);
    const validate = validator();
    const uids = new Set<string>();
    for (const name of ['benchmark_report_1.yaml', 'benchmark_report_2.yaml']) {
      const doc = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Json;
      assert.deepEqual(validate(doc), [], name);
      assert.equal(doc.results.request_performance.aggregate.requests.total, 4);
      uids.add(doc.run.uid as string);
    }
    assert.equal(uids.size, 2, 'each report its own run.uid');
  });

  test("sweep writes one report per point, its stage the point's index and its concurrency the point's", async () => {
    const dir = tempDir('llmd-report-sweep');
    const file = join(dir, 'benchmark_report.yaml');
    const result = await runCli(['sweep', '--concurrency', '1,2', '-n', '4', '--output-dir', join(dir, 'sweep'), '--llmd-report', file, '--progress', 'off', '-q'], { timeoutMs: 200_000 });
    assert.equal(result.code, 0, result.stderr);
    const validate = validator();
    for (const [index, concurrency] of [[0, 1], [1, 2]] as const) {
      const doc = JSON.parse(readFileSync(join(dir, `benchmark_report_${index}.yaml`), 'utf8')) as Json;
      assert.deepEqual(validate(doc), []);
      assert.equal(doc.scenario.load.standardized.stage, index);
      assert.equal(doc.scenario.load.standardized.concurrency, concurrency);
    }
  });

  test('numbers keep a point before their exponent (PyYAML, YAML 1.1, reads 1e-7 as a string)', () => {
    const text = llmdReportText({ a: 1e-7, b: 2.5e-7, c: 1e21, d: 3, e: 0.25, f: [1e-9] });
    assert.deepEqual(JSON.parse(text), { a: 1e-7, b: 2.5e-7, c: 1e21, d: 3, e: 0.25, f: [1e-9] });
    assert.match(text, /"a": 1\.0e-7,/);
    assert.match(text, /"c": 1\.0e\+21,/);
    assert.match(text, /"b": 2\.5e-7,/);
  });

  test("uuid5 is RFC 4122's (Python's uuid.uuid5)", () => {
    // Python 3.11: uuid.uuid5(uuid.NAMESPACE_URL, 'https://github.com/llm-d/llm-d-benchmark')
    assert.equal(uuid5(UUID_NAMESPACE_URL, 'https://github.com/llm-d/llm-d-benchmark'), '6157b26b-c4b3-5555-8d06-7c4c111f92b3');
  });
});
