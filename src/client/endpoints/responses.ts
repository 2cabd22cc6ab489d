import type { ResponseCollector } from '../response-collector.js';
import { errorSaid, excerpt } from '../error-body.js';
import { acceptUsage } from '../usage.js';
import type { ServerUsage } from '../types.js';
import type { ApiEndpoint, ResponseReader } from './endpoint.js';
import { buildResponsesBody } from './responses-body.js';

/** The parts of a Responses API `Response` object the reader uses. */
interface ResponseJson {
  id?: unknown;
  status?: unknown;
  error?: { message?: unknown; code?: unknown } | null;
  incomplete_details?: { reason?: unknown } | null;
  output?: unknown;
  usage?: ResponsesUsageJson | null;
  /** NVIDIA Dynamo's extension: the worker that served, when asked (client/dynamo-worker.ts); a whole body only. */
  nvext?: unknown;
}
interface ResponsesUsageJson {
  input_tokens?: unknown;
  output_tokens?: unknown;
  input_tokens_details?: { cached_tokens?: unknown } | null;
  output_tokens_details?: { reasoning_tokens?: unknown } | null;
}

/** The token counts of a Responses API `usage` (`input_tokens`, `output_tokens` and their details), if complete. */
export function responsesUsageOf(usage: ResponsesUsageJson): ServerUsage | undefined {
  const input = usage.input_tokens;
  const output = usage.output_tokens;
  if (typeof input !== 'number' || typeof output !== 'number') return undefined;
  const parsed: ServerUsage = { promptTokens: input, completionTokens: output };
  const cached = usage.input_tokens_details?.cached_tokens;
  if (typeof cached === 'number') parsed.cachedTokens = cached;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') parsed.reasoningTokens = reasoning;
  return parsed;
}

/** Event types that carry answer text (`delta`): the output's, and a reasoning model's reasoning and its summary. */
const CONTENT_DELTA = 'response.output_text.delta';
const REASONING_DELTAS = new Set(['response.reasoning_text.delta', 'response.reasoning_summary_text.delta']);

/**
 * Reads a `/v1/responses` answer. Streamed, it is typed events (OpenAI's format, which vLLM follows): each `data:` is a
 * JSON object whose `type` names the event (the SSE `event:` line repeats it; the reader needs only the data):
 * `response.created` (the response's id), `response.output_text.delta` (`delta`: text), reasoning deltas, then one
 * terminal event carrying the whole response with its `usage`: `response.completed`, `response.incomplete`
 * (max_output_tokens reached: finish reason `length`) or `response.failed` (`response.error`); an `error` event
 * fails too. There is no `data: [DONE]`: the stream ends after the terminal event. Unknown events are skipped.
 */
class ResponsesReader implements ResponseReader {
  readonly endMarker = 'a terminal event (response.completed)';
  readonly #collector: ResponseCollector;

  constructor(collector: ResponseCollector) {
    this.#collector = collector;
  }

  onSseEvent(data: string, atMs: number): void {
    const collector = this.#collector;
    if (collector.finished || data.length === 0) return;
    // Lenient: a server that ends with the chat stream's sentinel instead of a terminal event.
    if (data === '[DONE]') return collector.complete(atMs);
    const event = collector.parseObject(data, 'stream event', atMs);
    if (event === undefined) return;
    const type = event.type;
    if (type === CONTENT_DELTA || (typeof type === 'string' && REASONING_DELTAS.has(type))) {
      const delta = typeof event.delta === 'string' ? event.delta : '';
      if (delta.length === 0) return;
      if (type === CONTENT_DELTA) collector.addText(delta, '', atMs);
      else collector.addText('', delta, atMs);
      collector.markAnswered();
      return;
    }
    const response = (event.response ?? null) as ResponseJson | null;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        this.#noteId(response);
        return;
      case 'response.output_item.added':
        // A function call is an answer too (the agentic case), though it carries no output text.
        if ((event.item as { type?: unknown } | null)?.type === 'function_call') collector.markAnswered();
        return;
      case 'response.completed':
      case 'response.incomplete':
        if (response !== null && typeof response === 'object') this.#finish(response, atMs, false);
        else collector.complete(atMs);
        return;
      case 'response.failed':
        this.#noteId(response);
        return this.#fail(`response.failed: ${errorSaid(response) ?? excerpt(JSON.stringify(response?.error ?? response), 200)}`, atMs);
      case 'error':
        return this.#fail(`error event in stream: ${excerpt(typeof event.message === 'string' ? event.message : (errorSaid(event) ?? data), 200)}`, atMs);
      default:
        // A chat-style error object ({"error": …}) with no type: an error all the same.
        if (type === undefined && event.error !== undefined && event.error !== null) this.#fail(`error event in stream: ${excerpt(errorSaid(event) ?? data, 200)}`, atMs);
    }
  }

  acceptJsonBody(text: string, atMs: number): void {
    const collector = this.#collector;
    if (collector.finished) return;
    const json = collector.parseObject(text, 'response body', atMs) as ResponseJson | undefined;
    if (json === undefined) return;
    if (json.status === 'failed' || (json.error !== undefined && json.error !== null)) {
      this.#noteId(json);
      return this.#fail(`error object in response: ${errorSaid(json) ?? excerpt(text, 200)}`, atMs);
    }
    if (!Array.isArray(json.output)) return collector.fail({ kind: 'malformed_stream', message: 'response body has no output' }, atMs);
    // Dynamo's NvResponse carries the worker beside the response (lib/llm/src/protocols/openai/responses/mod.rs); its
    // stream converter sends none (stream_converter.rs).
    if (json.nvext !== undefined) collector.noteWorker(json.nvext, text);
    this.#finish(json, atMs, true);
  }

  /** The terminal response: its id, usage and finish reason; with `withText` (a whole body) its output text too. */
  #finish(response: ResponseJson, atMs: number, withText: boolean): void {
    const collector = this.#collector;
    this.#noteId(response);
    if (withText) {
      const { content, reasoning } = outputText(response.output);
      collector.addText(content, reasoning, atMs, false);
      if (content.length > 0 || reasoning.length > 0) collector.markAnswered();
    }
    if (Array.isArray(response.output) && response.output.some((item) => (item as { type?: unknown } | null)?.type === 'function_call')) collector.markAnswered();
    const reason = response.incomplete_details?.reason;
    if (response.status === 'incomplete') {
      collector.result.finishReason = reason === 'max_output_tokens' ? 'length' : typeof reason === 'string' ? reason : 'incomplete';
      if (reason === 'max_output_tokens') collector.markAnswered();
    } else if (typeof response.status === 'string') {
      collector.result.finishReason = response.status === 'completed' ? 'stop' : response.status;
    }
    const usage = response.usage;
    if (usage !== null && typeof usage === 'object') {
      const parsed = responsesUsageOf(usage);
      acceptUsage(collector.result, parsed);
    }
    collector.complete(atMs);
  }

  #noteId(response: ResponseJson | null | undefined): void {
    const id = response?.id;
    if (typeof id === 'string' && id.length > 0 && id.length <= 512) this.#collector.result.responseId = id;
  }

  #fail(message: string, atMs: number): void {
    this.#collector.fail({ kind: 'malformed_stream', message }, atMs);
  }
}

/** The output text of a whole Response: `output_text` parts of its messages, and its reasoning items' text. */
function outputText(output: unknown): { content: string; reasoning: string } {
  let content = '';
  let reasoning = '';
  if (!Array.isArray(output)) return { content, reasoning };
  for (const item of output as Array<{ type?: unknown; content?: unknown; summary?: unknown } | null>) {
    if (item === null || typeof item !== 'object') continue;
    const parts = Array.isArray(item.content) ? (item.content as Array<{ type?: unknown; text?: unknown } | null>) : [];
    if (item.type === 'message') {
      for (const part of parts) if (part?.type === 'output_text' && typeof part.text === 'string') content += part.text;
    } else if (item.type === 'reasoning') {
      for (const part of parts) if (typeof part?.text === 'string') reasoning += part.text;
    }
  }
  return { content, reasoning };
}

/** `/v1/responses`: the history as input items (or previous_response_id), typed events out. */
export const responsesEndpoint: ApiEndpoint = {
  name: 'responses',
  path: '/v1/responses',
  body: buildResponsesBody,
  reader: (collector) => new ResponsesReader(collector),
};
