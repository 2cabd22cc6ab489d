// Streams of the other endpoints, in the formats real servers send, for scripted servers.
import { sseEvent } from './scripted-server.js';

/**
 * OpenAI's Responses API stream (the format vLLM's /v1/responses follows too): every event is an `event: <type>` line
 * and a `data:` object with the same `type` and a `sequence_number`; the answer is `response.output_text.delta`
 * events; a terminal `response.completed` (or `response.incomplete`) carries the whole response with `usage`
 * (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`);
 * no `data: [DONE]`. Event shapes as in the `openai` package's types (ResponseStreamEvent).
 */
export class OpenAiResponsesStream {
  #sequence = 0;
  readonly id: string;

  constructor(id = 'resp_68a1b2c3d4e5f6') {
    this.id = id;
  }

  event(type: string, fields: object): string {
    return `event: ${type}\n${sseEvent(JSON.stringify({ type, sequence_number: this.#sequence++, ...fields }))}`;
  }

  response(status: string, text: string, usage: { input: number; output: number; cached: number; reasoning: number } | null, extra: object = {}): object {
    return {
      id: this.id,
      object: 'response',
      created_at: 1_760_000_000,
      status,
      error: null,
      incomplete_details: null,
      model: 'gpt-4.1-mini',
      output: text.length === 0 ? [] : [{ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
      usage:
        usage === null
          ? null
          : {
              input_tokens: usage.input,
              input_tokens_details: { cached_tokens: usage.cached },
              output_tokens: usage.output,
              output_tokens_details: { reasoning_tokens: usage.reasoning },
              total_tokens: usage.input + usage.output,
            },
      ...extra,
    };
  }

  /** response.created, response.in_progress, output_item.added, content_part.added. */
  opening(): string {
    const response = this.response('in_progress', '', null);
    return (
      this.event('response.created', { response }) +
      this.event('response.in_progress', { response }) +
      this.event('response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }) +
      this.event('response.content_part.added', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })
    );
  }

  delta(text: string): string {
    return this.event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: text, logprobs: [] });
  }

  reasoningDelta(text: string): string {
    return this.event('response.reasoning_text.delta', { item_id: 'rs_1', output_index: 0, content_index: 0, delta: text });
  }

  /** output_text.done, output_item.done, then the terminal event. */
  closing(text: string, usage: { input: number; output: number; cached: number; reasoning: number }, status: 'completed' | 'incomplete' = 'completed'): string {
    const extra = status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {};
    return (
      this.event('response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text, logprobs: [] }) +
      this.event('response.output_item.done', { output_index: 0, item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] } }) +
      this.event(`response.${status}`, { response: this.response(status, text, usage, extra) })
    );
  }
}

/**
 * vLLM's /v1/completions stream (OpenAI's legacy completions format): `text_completion` chunks whose
 * `choices[0].text` is the new text, `finish_reason` on the last, then with `stream_options.include_usage` a chunk with
 * `choices: []` and `usage` (prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens), then [DONE].
 */
export function vllmCompletionsStream(tokens: readonly string[], usage: { prompt: number; cached: number }): string {
  const head = { id: 'cmpl-9f2c', object: 'text_completion', created: 1_760_000_000, model: 'Qwen/Qwen3-0.6B' };
  const chunk = (text: string, finish: string | null): string =>
    sseEvent(JSON.stringify({ ...head, choices: [{ index: 0, text, logprobs: null, finish_reason: finish, stop_reason: null }], usage: null }));
  return (
    tokens.map((t, i) => chunk(t, i === tokens.length - 1 ? 'length' : null)).join('') +
    sseEvent(
      JSON.stringify({
        ...head,
        choices: [],
        usage: { prompt_tokens: usage.prompt, total_tokens: usage.prompt + tokens.length, completion_tokens: tokens.length, prompt_tokens_details: { cached_tokens: usage.cached } },
      }),
    ) +
    sseEvent('[DONE]')
  );
}
