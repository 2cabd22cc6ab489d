import type { ResponseCollector } from '../response-collector.js';
import { errorText, isErrorObject } from '../error-body.js';
import { chatUsageOf, type UsageJson } from '../usage.js';
import { acceptUsage } from '../usage.js';
import type { ChatRequest } from '../types.js';
import { withRequestFields } from '../request-body.js';
import type { ApiEndpoint, ResponseReader } from './endpoint.js';

/**
 * The body of a `/v1/completions` request: the prompt text the engine rendered with the run's chat template, and the
 * same sampling fields, stream_options and extraBody as a chat request (request-body.ts).
 */
export function buildCompletionsBody(request: ChatRequest): Record<string, unknown> {
  if (request.prompt === undefined) throw new Error('a /v1/completions request needs its prompt text (the chat template applied to the messages)');
  return withRequestFields({ model: request.model, prompt: request.prompt, stream: request.stream }, request);
}

interface CompletionChoice {
  text?: unknown;
  finish_reason?: unknown;
}

/**
 * Reads a `/v1/completions` answer (OpenAI's legacy format, as vLLM and SGLang stream it): `choices[0].text` deltas,
 * `finish_reason` on the last, a `usage` chunk when asked for, then `data: [DONE]`; or one `text_completion` body.
 */
class CompletionsReader implements ResponseReader {
  readonly #collector: ResponseCollector;

  constructor(collector: ResponseCollector) {
    this.#collector = collector;
  }

  onSseEvent(data: string, atMs: number): void {
    const collector = this.#collector;
    if (collector.finished) return;
    if (data === '[DONE]') return collector.complete(atMs);
    if (data.length === 0) return;
    const json = this.#object(data, 'stream event', atMs);
    if (json !== undefined) this.#choices(json, data, atMs, true);
  }

  acceptJsonBody(text: string, atMs: number): void {
    const collector = this.#collector;
    if (collector.finished) return;
    const json = this.#object(text, 'response body', atMs);
    if (json === undefined) return;
    if (!Array.isArray(json.choices)) return collector.fail({ kind: 'malformed_stream', message: 'response body has no choices' }, atMs);
    this.#choices(json, text, atMs, false);
    collector.complete(atMs);
  }

  #object(text: string, what: 'stream event' | 'response body', atMs: number): Record<string, unknown> | undefined {
    const json = this.#collector.parseObject(text, what, atMs);
    if (json !== undefined && isErrorObject(json)) {
      this.#collector.fail({ kind: 'malformed_stream', message: `error ${what === 'stream event' ? 'event in stream' : 'object in response'}: ${errorText(json)}` }, atMs);
      return undefined;
    }
    return json;
  }

  #choices(json: Record<string, unknown>, raw: string, atMs: number, isChunk: boolean): void {
    const collector = this.#collector;
    const choices = Array.isArray(json.choices) ? (json.choices as Array<CompletionChoice | null>) : [];
    const choice = choices[0];
    // Before the text, as the chat reader does: the lookup at the first token reads the worker's cache too.
    if (json.nvext !== undefined) collector.noteWorker(json.nvext, raw);
    if (choice !== null && typeof choice === 'object') {
      if (typeof choice.text === 'string') collector.addText(choice.text, '', atMs, isChunk);
      if (typeof choice.finish_reason === 'string') collector.result.finishReason = choice.finish_reason;
    }
    if (choices.some((c) => c !== null && typeof c === 'object' && ((typeof c.text === 'string' && c.text.length > 0) || c.finish_reason === 'length'))) {
      collector.markAnswered();
    }
    const usage = json.usage;
    if (usage !== null && typeof usage === 'object') {
      const parsed = chatUsageOf(usage as UsageJson, json.timings as { cache_n?: unknown } | undefined);
      acceptUsage(collector.result, parsed);
    }
  }
}

/** `/v1/completions`: the chat template applied by chatload, the prompt text sent; `choices[0].text` deltas out. */
export const completionsEndpoint: ApiEndpoint = {
  name: 'completions',
  path: '/v1/completions',
  body: buildCompletionsBody,
  reader: (collector) => new CompletionsReader(collector),
};
