// The option table and the RunPlan: one declaration per option reaches --help, the docs, the CLI and the library
// alike; values are parsed once into typed plan parts; every problem is reported at once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Command } from 'commander';
import { addRunOptions, runOptionsFromCommand } from '../../src/cli/run-options.js';
import { ConfigError } from '../../src/errors/index.js';
import { inputDocComment, renderOptionsDoc } from '../../src/options/docs.js';
import { RUN_OPTIONS } from '../../src/options/run-options.js';
import { planRun, type RunPlan } from '../../src/options/run-plan.js';
import { REPO_ROOT } from '../helpers/repo.js';

const root = REPO_ROOT;
// The command line also reads these (commander's .env()): the comparisons with library input must not see them.
delete process.env.OPENAI_API_KEY;
delete process.env.MULTITURN_BENCH_MAX_RETRIES;

/** The plan a `chatload run ARGS` command line makes (environment: `env` for the shard, process.env for the rest). */
function cliPlan(args: string[], env: NodeJS.ProcessEnv = {}): RunPlan {
  return runOptionsFromCommand(addRunOptions(new Command().exitOverride()).parse(args, { from: 'user' }), env).plan;
}

/** The one-line message of the ConfigError `fn` throws. */
function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.exitCode, 2);
    assert.doesNotMatch(error.message, /\n/);
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

describe('the run option table', () => {
  test('docs/OPTIONS.md is what the tables say (run `npm run docs:options` after changing them)', () => {
    assert.equal(readFileSync(join(root, 'docs', 'OPTIONS.md'), 'utf8'), renderOptionsDoc());
  });

  test("the library's RunOptionsInput names every option in table order, each with its help (run `npm run docs:options`)", () => {
    // The property types are checked against the zod schema by the typecheck (run-options.ts); this checks the rest.
    const lines = readFileSync(join(root, 'src', 'options', 'run-options-input.ts'), 'utf8').split('\n');
    const keys = Object.keys(RUN_OPTIONS) as Array<keyof typeof RUN_OPTIONS>;
    const declared = lines.flatMap((line) => /^ {2}(\w+)\?: /.exec(line)?.[1] ?? []);
    assert.deepEqual(declared, keys);
    for (const key of keys) {
      const at = lines.findIndex((line) => line.startsWith(`  ${key}?: `));
      assert.equal(lines[at - 1], inputDocComment(key), `${key}'s doc comment`);
    }
  });

  test('every flag and alias of chatload run is declared, once', () => {
    const command = addRunOptions(new Command());
    const names = command.options.flatMap((o) => [o.short, o.long]).filter((n): n is string => n !== undefined);
    assert.equal(new Set(names).size, names.length, 'no flag declared twice');
    const expected = '-i -o -m -u -p -k -n -e -q -v --input-file --output-file --output-dir --seed --model --tokenizer --served-model-name --url --api-key --header --num-clients --max-active-conversations --max-num-requests --max-turns --early-stop --no-early-stop --warmup-step --warmup-percentages --limit-min-tokens --limit-max-tokens --request-rate --max-retries --conversation-sampling --verify-output --request-timeout-sec --ttft-timeout-sec --idle-timeout-sec --benchmark-timeout-sec --duration --stop-grace-sec --ready-timeout-sec --no-stream --send-conversation-id --replay-dataset-answers --ignore-eos --temperature --extra-body --session-rate --burstiness --ramp-up --max-concurrency --think-time --goodput --scrape-metrics --replica-header --scrape-interval-sec --reset-prefix-cache --max-error-rate --excel-output --csv --no-report --shard --start-at --workers --stats-json-output --quiet --verbose --print-content --trust-remote-code --sim-profile --sim-faults --generate-only --overwrite --resume --allow-invalid-utf8 --keep-reasoning --percentile-metrics --metric-percentiles';
    for (const flag of expected.split(' ')) assert.ok(names.includes(flag), flag);
    // Defaults are said from the table's `default`, never written into a help text a second time.
    for (const spec of Object.values(RUN_OPTIONS)) assert.doesNotMatch(spec.help, /\(default:/, spec.flags);
  });

  test('options/ imports nothing from the parts above it (engine, sim, synth, benchmark, cli, ...)', () => {
    const dir = join(root, 'src', 'options');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    for (const file of files) {
      const imports = [...readFileSync(join(dir, file), 'utf8').matchAll(/from '(\.[^']+)'/g)].map((m) => m[1]!);
      for (const path of imports) assert.doesNotMatch(path, /\/(engine|sim|synth|benchmark|cli|client|metrics|report|conversation|tokenizer)\//, `${file} imports ${path}`);
    }
  });
});

describe('defaults: one declaration for the CLI, the library and the built-in demo', () => {
  test('the CLI and the library make the same plan', () => {
    const cases: Array<[string[], Record<string, unknown>]> = [
      [[], {}],
      [['-u', 'http://127.0.0.1:8000'], { url: 'http://127.0.0.1:8000' }],
      [['-p', '4', '--session-rate', '2', '--think-time', 'uniform:1:3'], { numClients: 4, sessionRate: 2, thinkTime: 'uniform:1:3' }],
    ];
    for (const [args, input] of cases) {
      const fromCli = cliPlan(args);
      const fromLibrary = planRun(input);
      assert.deepEqual({ ...fromCli, config: undefined }, { ...fromLibrary, config: undefined }, args.join(' '));
      assert.deepEqual(fromCli.config, fromLibrary.config);
    }
  });

  test('the built-in demo has 16 clients over 32 conversations, drained; any value given wins', () => {
    const demo = planRun({}).load;
    assert.equal(demo.clients, 16);
    assert.deepEqual(demo.model, { type: 'fixed-clients', numClients: 16, maxActiveConversations: 32, sampling: 'round_robin', requestRatePerSec: 0, earlyStop: false });
    const server = planRun({ url: 'http://127.0.0.1:8000' }).load.model;
    assert.deepEqual(server, { type: 'fixed-clients', numClients: 1, maxActiveConversations: 1, sampling: 'round_robin', requestRatePerSec: 0, earlyStop: true });
    const four = planRun({ numClients: 4 }).load.model;
    assert.ok(four.type === 'fixed-clients' && four.maxActiveConversations === 4 && !four.earlyStop);
  });

  test('results.json records the options as given, with their defaults', () => {
    const { config } = planRun({ url: 'http://127.0.0.1:8000', goodput: ['ttft:200'], rampUp: 'linear:1:4:10' });
    assert.deepEqual(config.goodput, ['ttft:200']);
    assert.equal(config.rampUp, 'linear:1:4:10');
    assert.equal(config.requestTimeoutSec, 120);
    assert.equal(config.numClients, 1);
  });
});

describe('the RunPlan: parsed once, by part', () => {
  test('strings become typed values, seconds become milliseconds', () => {
    const plan = cliPlan(
      ['--ramp-up', 'linear:1:20:60', '--burstiness', '0.5', '--think-time', 'exponential:5', '--max-concurrency', '8', '--goodput', 'ttft:500', 'e2el:10000'],
      { JOB_COMPLETION_INDEX: '1', CHATLOAD_SHARD_COUNT: '4' },
    );
    assert.deepEqual(plan.load.model, {
      type: 'open-sessions',
      arrivals: { ratePerSec: 20, burstiness: 0.5, rampUp: { startPerSec: 1, seconds: 60 } },
      maxConcurrency: 8,
      thinkTimeSec: { distribution: 'exponential', mean: 5 },
    });
    assert.equal(plan.load.connections, 8);
    assert.deepEqual(plan.summary.goodput, { ttft_ms: 500, e2el_ms: 10000 });
    assert.deepEqual(plan.scale.shard, { index: 1, count: 4 });
    assert.deepEqual(plan.deadlines.request, { requestTimeoutMs: 120_000, ttftTimeoutMs: undefined, idleTimeoutMs: undefined });
    const timed = cliPlan(['--request-timeout-sec', '2.5', '--ttft-timeout-sec', '1', '--duration', '30', '--start-at', '2026-12-01T10:00:00Z', '--header', 'X-A: 1', '--header', 'X-B: two']);
    assert.deepEqual(timed.deadlines.request, { requestTimeoutMs: 2500, ttftTimeoutMs: 1000, idleTimeoutMs: undefined });
    assert.equal(timed.deadlines.durationMs, 30_000);
    assert.equal(timed.scale.startAtEpochMs, Date.parse('2026-12-01T10:00:00Z'));
    assert.deepEqual(timed.target.headers, { 'X-A': '1', 'X-B': 'two' });
  });

  test('the request template says what --limit-max-tokens and --limit-min-tokens mean', () => {
    assert.equal(planRun({}).request.maxTokens, 'recorded');
    assert.equal(planRun({ limitMaxTokens: -1 }).request.maxTokens, undefined);
    const limited = planRun({ limitMinTokens: 8, limitMaxTokens: 64 }).request;
    assert.equal(limited.maxTokens, 64);
    assert.equal(limited.minTokens, 8);
  });

  test('the plan is frozen', () => {
    const plan = planRun({ extraBody: { top_p: 0.9 } });
    assert.ok(Object.isFrozen(plan) && Object.isFrozen(plan.load.model) && Object.isFrozen(plan.deadlines.request) && Object.isFrozen(plan.request.extraBody));
  });
});

describe('errors: every problem at once, each naming its flag', () => {
  test('from the command line', () => {
    const message = configError(() => cliPlan(['-p', 'zero', '--ramp-up', 'fast', '--goodput', 'ttft:abc', '--extra-body', '[1]', '--workers', 'many']));
    assert.match(message, /^invalid options: /);
    for (const part of ['--num-clients: expected a positive integer', '--ramp-up: expected linear:START:END:SECONDS', '--goodput: expected ttft:MS', '--extra-body: expected a JSON object', '--workers: expected a positive integer or auto']) {
      assert.ok(message.includes(part), `${part} in ${message}`);
    }
  });

  test('from the library, with the same flag names', () => {
    const message = configError(() => planRun({ numClients: 0, durationSec: -1, thinkTime: 'gauss:1', sessionRate: 1, oops: 1 } as never));
    for (const part of ['--num-clients: expected a positive integer', '--duration: expected a number > 0', '--think-time: expected NAME:ARGS', 'unknown option(s) --oops']) {
      assert.ok(message.includes(part), `${part} in ${message}`);
    }
  });

  test('a value from the environment says so', () => {
    assert.match(configError(() => cliPlan([], { JOB_COMPLETION_INDEX: '4', CHATLOAD_SHARD_COUNT: '4' })), /--shard \(from JOB_COMPLETION_INDEX and CHATLOAD_SHARD_COUNT\): expected I\/N with 0 <= I < N/);
  });
});
