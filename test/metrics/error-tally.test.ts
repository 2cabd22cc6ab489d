// Repeated errors are grouped when only their numbers differ (issue #34: a Mooncake replay's 13 context-length 400s,
// each naming its own token count, were 13 rows); different messages stay apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorTally, errorShape } from '../../src/metrics/error-tally.js';
import type { RequestRecord } from '../../src/metrics/record.js';

const failed = (message: string, kind = 'http_status'): RequestRecord => ({ status: 'error', error_kind: kind, error: message }) as unknown as RequestRecord;

test('messages that differ only in numbers are one group, shown with # for the numbers', () => {
  const tally = new ErrorTally();
  // vLLM's answer when a prompt and max_tokens pass max_model_len (its serving_engine's context-length check).
  for (let i = 0; i < 13; i++) tally.add(failed(`HTTP 400: This model's maximum context length is 4096 tokens. However, you requested ${5000 + i * 7} tokens.`));
  tally.add(failed('HTTP 503: overloaded'));
  tally.add(failed('HTTP 503: overloaded'));
  tally.add(failed('connect ECONNREFUSED 127.0.0.1:8000', 'connect_refused'));
  assert.deepEqual(tally.top(10), [
    { kind: 'http_status', message: "HTTP #: This model's maximum context length is # tokens. However, you requested # tokens.", count: 13 },
    { kind: 'http_status', message: 'HTTP 503: overloaded', count: 2 },
    { kind: 'connect_refused', message: 'connect ECONNREFUSED 127.0.0.1:8000', count: 1 },
  ]);
  assert.equal(tally.failed, 16);
  assert.equal(errorShape('a 1.5 b 22'), 'a # b #');
});
