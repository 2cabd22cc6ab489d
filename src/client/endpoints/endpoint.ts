import type { ResponseCollector } from '../response-collector.js';
import type { ChatRequest } from '../types.js';

/** The APIs chatload speaks (--endpoint). */
export type EndpointName = 'chat' | 'responses' | 'completions';

/** What reads one response's SSE events, or its whole JSON body, into a {@link ResponseCollector}. Never throws. */
export interface ResponseReader {
  /** One SSE event's data, arrived at `atMs` (monotonic ms). */
  onSseEvent(data: string, atMs: number): void;
  /** A whole non-streamed body that ended at `atMs`. */
  acceptJsonBody(text: string, atMs: number): void;
  /** What ends a complete stream, for the truncated_stream message. @default 'data: [DONE]' */
  readonly endMarker?: string;
}

/**
 * One API: where requests go, the JSON body of a request, and how its answer is read. Everything else of a request
 * (connections, timing, timeouts, the error taxonomy, HTTP status handling) is the ChatClient's, shared by all.
 */
export interface ApiEndpoint {
  readonly name: EndpointName;
  /** The request path under the base URL, e.g. `/v1/responses`. */
  readonly path: string;
  /** The request's JSON body. Throws only on a request the engine never builds (a completions request with no prompt). */
  body(request: ChatRequest): Record<string, unknown>;
  /**
   * The body as UTF-8 JSON, when the endpoint encodes it faster than JSON.stringify(body(request)) (the same JSON up
   * to key order): chat joins each message's kept JSON (request-body.ts, linear per-turn cost). A large body comes as
   * its list of chunks, never copied into one Buffer (see request-body.ts's sendableBody).
   */
  encode?(request: ChatRequest): Buffer | Buffer[];
  /** A reader of one response into `collector` (made afresh per attempt). */
  reader(collector: ResponseCollector): ResponseReader;
}
