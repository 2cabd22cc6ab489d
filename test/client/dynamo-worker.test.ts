// NVIDIA Dynamo's `nvext.worker_id` (client/dynamo-worker.ts): the replica name it gives, and how the response
// collector takes it: before the first token of the chunk that carries it, never over a header's replica.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dynamoWorkerOf, withWorkerIdAsked } from '../../src/client/dynamo-worker.js';
import { ResponseCollector } from '../../src/client/response-collector.js';

/** A chunk's text with `nvext` written as given (its numbers' digits as they are). */
const chunk = (content: string, nvext: string): string =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}],"nvext":${nvext}}`;
const nameOf = (text: string): string | undefined => dynamoWorkerOf((JSON.parse(text) as { nvext: unknown }).nvext, text);

describe("Dynamo's nvext.worker_id", () => {
  test('the prefill worker by its exact digits and rank; the decode worker without one; nothing without an id', () => {
    // 7587891994254240587 is past 2^53: JSON.parse reads it as 7587891994254240768.
    assert.equal(nameOf(chunk('Hi', '{"worker_id":{"prefill_worker_id":7587891994254240587,"prefill_dp_rank":3,"decode_worker_id":12,"decode_dp_rank":0}}')), '7587891994254240587 dp 3');
    assert.equal(nameOf(chunk('Hi', '{"worker_id":{"decode_worker_id":42}}')), '42');
    assert.equal(nameOf(chunk('Hi', '{"worker_id":{"prefill_worker_id":"7","decode_worker_id":-1}}')), undefined);
    // 0 is no worker (Dynamo's NO_WORKER_ID): the decode worker is taken.
    assert.equal(nameOf(chunk('Hi', '{"worker_id":{"prefill_worker_id":0,"decode_worker_id":8}}')), '8');
    assert.equal(nameOf(chunk('Hi', '{"timing":{"ttft_ms":3}}')), undefined);
    assert.equal(nameOf(chunk('Hi', '{"worker_id":null}')), undefined);
    // A rank that is no whole number is left out.
    assert.equal(nameOf(chunk('Hi', '{"worker_id":{"prefill_worker_id":5,"prefill_dp_rank":"x"}}')), '5');
  });

  test("an answer's text that spells the key does not give the digits", () => {
    const text = chunk('"prefill_worker_id": 99999999999999999999', '{"worker_id":{"prefill_worker_id":7587891994254240587}}');
    assert.equal(nameOf(text), '7587891994254240587');
  });

  test("asking merges into --extra-body's nvext, once", () => {
    assert.deepEqual(withWorkerIdAsked(undefined), { nvext: { extra_fields: ['worker_id'] } });
    assert.deepEqual(withWorkerIdAsked({ top_k: 2, nvext: { extra_fields: ['timing'], greed_sampling: true } }), { top_k: 2, nvext: { extra_fields: ['timing', 'worker_id'], greed_sampling: true } });
    assert.deepEqual(withWorkerIdAsked({ nvext: { extra_fields: ['worker_id'] } }), { nvext: { extra_fields: ['worker_id'] } });
    assert.deepEqual(withWorkerIdAsked({ nvext: 'odd' }), { nvext: { extra_fields: ['worker_id'] } });
  });

  test('the collector names the replica before the first token of the chunk that carries it, once', () => {
    const events: string[] = [];
    const collector = new ResponseCollector(0, [], () => events.push('first token'), { onReplica: (r) => events.push(`replica ${r}`) });
    collector.onSseEvent(chunk('Hello', '{"worker_id":{"prefill_worker_id":7587891994254240587,"prefill_dp_rank":0}}'), 5);
    collector.onSseEvent(chunk(' there', '{"worker_id":{"prefill_worker_id":9,"prefill_dp_rank":0}}'), 6);
    assert.deepEqual(events, ['replica 7587891994254240587 dp 0', 'first token']);
    assert.equal(collector.result.replica, '7587891994254240587 dp 0');
  });

  test("a header's replica wins: the body's worker is not taken", () => {
    const seen: string[] = [];
    const collector = new ResponseCollector(0, [], undefined, { onReplica: (r) => seen.push(r) });
    collector.result.replica = 'pod-a';
    collector.acceptJsonBody(`{"choices":[{"index":0,"message":{"content":"Hi"},"finish_reason":"stop"}],"nvext":{"worker_id":{"prefill_worker_id":3}}}`, 4);
    assert.equal(collector.result.replica, 'pod-a');
    assert.deepEqual(seen, []);
  });

  test('a body (stream off) names its worker too', () => {
    const collector = new ResponseCollector(0, []);
    collector.acceptJsonBody(`{"choices":[{"index":0,"message":{"content":"Hi"},"finish_reason":"stop"}],"nvext":{"worker_id":{"prefill_worker_id":3,"prefill_dp_rank":1}}}`, 4);
    assert.equal(collector.result.replica, '3 dp 1');
  });
});
