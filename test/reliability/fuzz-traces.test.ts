// Property tests (fast-check) for the dataset loaders that test/reliability/fuzz.test.ts leaves out: production traces
// (Mooncake and Bailian JSONL rows, read by conversation/trace.ts) and agentic generation configs
// (synth/agentic/config.ts). Near-valid inputs (a valid row or config with arbitrary values mixed in: huge, negative,
// fractional, 1e309, wrong types, deep nesting) give conversations or one line naming the file, exit 2, never
// another exception, and in bounded time (issue #35: a 5,000-level nesting overflowed the stack, 1e300 timestamps
// were sent at once). Runs are small (numRuns 150-250): the file takes a few seconds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { loadOrOneLineError } from '../helpers/load-or-error.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fuzz-traces');

/** Numbers a field may hold: mostly plausible, else the edges that broke loaders before (1e309 is written as text). */
const wildNumber = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 5_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0.5, 1e12, 1e300, Number.MAX_SAFE_INTEGER + 2, '1e309') },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const hashIds = fc.oneof({ weight: 6, arbitrary: fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 6 }) }, { weight: 1, arbitrary: fc.array(wildNumber, { maxLength: 3 }) }, { weight: 1, arbitrary: fc.jsonValue() });

/** A Mooncake row: ms timestamps, hash ids of --trace-block-size tokens, optional sessions, delays and messages. */
const mooncakeRow = fc.record(
  {
    timestamp: wildNumber,
    input_length: wildNumber,
    output_length: wildNumber,
    hash_ids: hashIds,
    session_id: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 3 }), fc.jsonValue()),
    delay: wildNumber,
    messages: fc.oneof(fc.constant([{ role: 'user', content: 'hi' }]), fc.jsonValue()),
  },
  { requiredKeys: ['input_length', 'output_length'] },
);

/** A valid Bailian row (input_length covered by its 16-token blocks), so that some traces load. */
const coherentBailianRow = fc
  .record({ chat_id: fc.integer({ min: 0, max: 6 }), parent_chat_id: fc.integer({ min: -1, max: 6 }), timestamp: fc.integer({ min: 0, max: 100 }), hash_ids: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 4 }) })
  .chain((row) => fc.integer({ min: (row.hash_ids.length - 1) * 16 + 1, max: row.hash_ids.length * 16 }).map((input_length) => ({ ...row, input_length, output_length: 4, type: 'text', turn: 1 })));

/** A Bailian row: s timestamps, chat ids with parents (-1 a root), 16-token blocks. */
const wildBailianRow = fc.record(
  {
    chat_id: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 6 }) }, { weight: 1, arbitrary: wildNumber }),
    parent_chat_id: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -1, max: 6 }) }, { weight: 1, arbitrary: wildNumber }),
    timestamp: wildNumber,
    input_length: wildNumber,
    output_length: wildNumber,
    type: fc.constantFrom('text', 'image', 'file', 'search'),
    turn: wildNumber,
    hash_ids: hashIds,
  },
  { requiredKeys: ['chat_id', 'parent_chat_id', 'timestamp'] },
);
const bailianRow = fc.oneof({ weight: 3, arbitrary: coherentBailianRow }, { weight: 1, arbitrary: wildBailianRow });

/** Rows as JSONL, a number given as the text `1e309` written raw (JSON.stringify cannot write it). */
function jsonl(rows: readonly unknown[]): string {
  return rows.map((row) => JSON.stringify(row).replace(/"1e309"/g, '1e309')).join('\n');
}

/** Distributions of an agentic config: mostly small valid ones, else the wild values. */
const distribution = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 30 }).map((value) => ({ distribution: 'constant', value })) },
  { weight: 2, arbitrary: fc.record({ distribution: fc.constantFrom('uniform', 'lognormal', 'zipf', 'poisson', 'exponential', 'x'), min: wildNumber, max: wildNumber, average: wildNumber, alpha: wildNumber, mean: wildNumber }, { requiredKeys: ['distribution'] }) },
  { weight: 1, arbitrary: fc.jsonValue() },
);
const small = fc.integer({ min: 1, max: 3 }).map((value) => ({ distribution: 'constant', value }));
/** Agentic configs near the valid shape: a preset, or every key, with wild values mixed in. */
const agenticConfig = fc.record(
  {
    filetype: fc.constant('generate_agentic_sessions'),
    preset: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('coding-agent', 'customer-service') }, { weight: 1, arbitrary: fc.jsonValue() }),
    num_sessions: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: wildNumber }),
    num_tools: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: wildNumber }),
    user_turns: fc.oneof({ weight: 4, arbitrary: small }, { weight: 1, arbitrary: distribution }),
    steps_per_turn: fc.oneof({ weight: 4, arbitrary: small }, { weight: 1, arbitrary: distribution }),
    parallel_calls: fc.oneof({ weight: 4, arbitrary: small }, { weight: 1, arbitrary: distribution }),
    system_prompt_tokens: distribution,
    tool_definition_tokens: distribution,
    user_tokens: distribution,
    tool_argument_tokens: distribution,
    tool_output_tokens: distribution,
    assistant_tokens: distribution,
    think_time_sec: distribution,
    sub_agents: fc.oneof(fc.constant(null), fc.record({ probability: wildNumber, children: small, steps: small, task_tokens: distribution, report_tokens: distribution }, { requiredKeys: [] }), fc.jsonValue()),
  },
  { requiredKeys: ['filetype', 'num_sessions'] },
);
/** Tight bounds, so a valid random config generates in milliseconds. */
const FUZZ_BOUNDS = { totalTokens: 20_000, generatedTurns: 60, messageTokens: 5_000 };

describe('trace and agentic loaders never throw anything but a one-line input error', () => {
  test('near-valid Mooncake traces', { timeout: 60_000 }, async () => {
    let loaded = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(mooncakeRow, { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 64 }), async (rows, blockSize) => {
        const result = await loadOrOneLineError(dir, jsonl(rows), '.jsonl', { trace: { format: 'mooncake', blockSize }, bounds: FUZZ_BOUNDS });
        if (result === 'ok') loaded += 1;
      }),
      { numRuns: 250 },
    );
    assert.ok(loaded > 0, 'some traces were valid and loaded');
  });

  test('near-valid Bailian traces, detected by their fields', { timeout: 60_000 }, async () => {
    let loaded = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(bailianRow, { minLength: 1, maxLength: 6 }), async (rows) => {
        if ((await loadOrOneLineError(dir, jsonl(rows), '.jsonl', { bounds: FUZZ_BOUNDS })) === 'ok') loaded += 1;
      }),
      { numRuns: 250 },
    );
    assert.ok(loaded > 0, 'some traces were valid and loaded');
  });

  test('a trace nested deep, or cut anywhere, is one line', { timeout: 30_000 }, async () => {
    const valid = jsonl([{ timestamp: 0, input_length: 20, output_length: 4, hash_ids: [1, 2] }, { timestamp: 10, input_length: 20, output_length: 4, hash_ids: [1, 3] }]);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: valid.length }), fc.integer({ min: 0, max: 6_000 }), async (cut, depth) => {
        const text = `${valid.slice(0, cut)}${'['.repeat(depth)}`;
        await loadOrOneLineError(dir, text, '.jsonl', { trace: { format: 'mooncake', blockSize: 16 } });
      }),
      { numRuns: 150 },
    );
  });

  test('near-valid agentic generation configs: sessions or a one-line ConfigError, in bounded time', { timeout: 60_000 }, async () => {
    let generated = 0;
    await fc.assert(
      fc.asyncProperty(agenticConfig, async (config) => {
        const text = JSON.stringify(config).replace(/"1e309"/g, '1e309');
        if ((await loadOrOneLineError(dir, text, '.json', { bounds: FUZZ_BOUNDS })) === 'ok') generated += 1;
      }),
      { numRuns: 200 },
    );
    assert.ok(generated > 0, 'some configs were valid and generated');
  });
});
