/*
 * The Responses API's streamed events and response object, in OpenAI's format (which vLLM's /v1/responses follows):
 * each SSE event has an `event:` line naming its type and a `data:` JSON object carrying the same `type` and a
 * `sequence_number`. A text answer goes: response.created, response.in_progress, then with the first token
 * response.output_item.added and response.content_part.added, one response.output_text.delta per token, and at the
 * end response.output_text.done, response.content_part.done, response.output_item.done and response.completed (or
 * response.incomplete at max_output_tokens) with the whole response and its usage. No `data: [DONE]`.
 */

/** Token counts of one response, in the Responses API's usage shape. */
export interface ResponsesUsageCounts {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
}

/** Formats one response's events and object. Holds only ids and the sequence number. */
export class ResponsesEvents {
  readonly #id: string;
  readonly #itemId: string;
  readonly #model: string;
  readonly #createdAt: number;
  #sequence = 0;

  /** @param id the response id (`resp_…`). @param createdAt epoch seconds. */
  constructor(id: string, model: string, createdAt: number) {
    this.#id = id;
    this.#itemId = `msg_${id.slice(5)}`;
    this.#model = model;
    this.#createdAt = createdAt;
  }

  /** The events sent when the stream opens: response.created and response.in_progress. */
  opened(): string {
    const response = this.response('in_progress', '', null, null);
    return this.#event('response.created', { response }) + this.#event('response.in_progress', { response });
  }

  /** One token's text: with the first, the message item and its text part are announced. */
  delta(text: string, first: boolean): string {
    let out = '';
    if (first) {
      out += this.#event('response.output_item.added', { output_index: 0, item: this.#message('', 'in_progress') });
      out += this.#event('response.content_part.added', { item_id: this.#itemId, output_index: 0, content_index: 0, part: textPart('') });
    }
    return out + this.#event('response.output_text.delta', { item_id: this.#itemId, output_index: 0, content_index: 0, delta: text, logprobs: [] });
  }

  /** The closing events, ending with the terminal one that carries the whole response and its usage. */
  finished(content: string, finish: 'stop' | 'length', usage: ResponsesUsageCounts): string {
    const where = { item_id: this.#itemId, output_index: 0, content_index: 0 };
    const status = finish === 'length' ? 'incomplete' : 'completed';
    return (
      this.#event('response.output_text.done', { ...where, text: content, logprobs: [] }) +
      this.#event('response.content_part.done', { ...where, part: textPart(content) }) +
      this.#event('response.output_item.done', { output_index: 0, item: this.#message(content, 'completed') }) +
      this.#event(`response.${status}`, { response: this.response(status, content, finish, usage) })
    );
  }

  /** The Response object (a non-streamed body, and what the terminal event carries). */
  response(status: string, content: string, finish: 'stop' | 'length' | null, usage: ResponsesUsageCounts | null): object {
    return {
      id: this.#id,
      object: 'response',
      created_at: this.#createdAt,
      status,
      error: null,
      incomplete_details: finish === 'length' ? { reason: 'max_output_tokens' } : null,
      model: this.#model,
      output: finish === null ? [] : [this.#message(content, 'completed')],
      usage:
        usage === null
          ? null
          : {
              input_tokens: usage.inputTokens,
              input_tokens_details: { cached_tokens: usage.cachedTokens },
              output_tokens: usage.outputTokens,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: usage.inputTokens + usage.outputTokens,
            },
    };
  }

  #message(text: string, status: string): object {
    return { id: this.#itemId, type: 'message', status, role: 'assistant', content: text.length === 0 && status === 'in_progress' ? [] : [textPart(text)] };
  }

  #event(type: string, fields: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#sequence++, ...fields })}\n\n`;
  }
}

function textPart(text: string): object {
  return { type: 'output_text', text, annotations: [] };
}
