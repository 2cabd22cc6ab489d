// Engine quirk: llama.cpp's llama-server streams its usage only in the LAST content chunk (the one with
// `finish_reason` and an empty delta, `choices` not empty), beside its own `timings` object; versions before
// `prompt_tokens_details` report the prompt tokens reused from the cache only as `timings.cache_n`. Its non-streamed
// reply carries the same `timings`. (Shapes as llama-server sends them, e.g. b6097.)
import { sseEvent, type ScriptedResponse } from './scripted-server.js';

/** llama-server's usage and timings for a reply of `completion` tokens to a `prompt`-token prompt, `cached` reused. */
export function llamacppUsage(prompt: number, completion: number, cached: number): { usage: object; timings: object } {
  return {
    usage: { completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion },
    timings: { cache_n: cached, prompt_n: prompt - cached, prompt_ms: 20.5, predicted_n: completion, predicted_ms: 40.1 },
  };
}

/** A streamed llama-server reply: `words` content chunks, then the finish chunk that carries usage and timings. */
export function llamacppStream(words: readonly string[], prompt: number, cached: number): ScriptedResponse {
  const base = { id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 0, model: 'gguf', system_fingerprint: 'b6097-9515c613' };
  const events = [sseEvent({ ...base, choices: [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }] })];
  for (const word of words) events.push(sseEvent({ ...base, choices: [{ finish_reason: null, index: 0, delta: { content: word } }] }));
  events.push(sseEvent({ ...base, choices: [{ finish_reason: 'stop', index: 0, delta: {} }], ...llamacppUsage(prompt, words.length, cached) }));
  events.push(sseEvent('[DONE]'));
  return { headers: { 'content-type': 'text/event-stream' }, actions: [{ write: events.join('') }, { end: true }] };
}
