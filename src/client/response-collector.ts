import { redactText } from '../util/redact-text.js';
import { ChunkShape, isPlain } from './chunk-shape.js';
import { ToolCallDeltas } from './tool-call-deltas.js';
import { hideMediaData } from './hide-media-data.js';
import { acceptUsage, chatUsageOf, type UsageJson } from './usage.js';
import { dynamoWorkerOf } from './dynamo-worker.js';
import { errorText, excerpt, isErrorObject } from './error-body.js';
import type { RequestError, StreamResult } from './types.js';

/**
 * Most text (content + reasoning, UTF-16 code units) one response may accumulate before it fails as `other`. An answer
 * is a message that goes back into the history, so it is bounded like one (docs/DATASETS.md): 16 Mi characters is
 * about 4,000,000 tokens, twice a generated message's bound, and 32 MB per answer in flight (it was 64 Mi: 128 MB).
 */
export const MAX_RESPONSE_CHARS = 16 * 1024 * 1024;
/**
 * Most token-carrying chunks one response may have: each keeps a timestamp (8 bytes) until the record is built, and
 * each carries at least one token, so this is the answer bound in chunks (issue #16).
 */
export const MAX_RESPONSE_CHUNKS = 4_000_000;
/**
 * Shapes tried in a row without a chunk matching one, after which a stream's chunks are only JSON.parsed: a server
 * whose chunks never repeat (a field that changes in every chunk) does not pay a probe per chunk.
 */
const MAX_UNUSED_SHAPES = 2;

/** The parts of an OpenAI chat completion chunk (or body) the collector reads. Everything is optional: servers vary. */
export interface CompletionJson {
  choices?: ChoiceJson[] | null;
  /** vLLM with `return_token_ids`: the prompt's ids (a stream's first chunk, or the body). */
  prompt_token_ids?: unknown;
  usage?: UsageJson | null;
  /** llama-server's per-request timings; `cache_n` is the prompt tokens it reused from its cache. */
  timings?: { cache_n?: unknown } | null;
  error?: unknown;
  object?: unknown;
  message?: unknown;
  /** NVIDIA Dynamo's response extensions: `worker_id` names the worker that served (client/dynamo-worker.ts). */
  nvext?: unknown;
}
interface ChoiceJson {
  /** vLLM with `return_token_ids`: the ids this chunk (or body) generated. */
  token_ids?: unknown;
  delta?: TextFields | null;
  message?: TextFields | null;
  finish_reason?: string | null;
}
interface TextFields {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
  function_call?: unknown;
}

/**
 * Builds a {@link StreamResult} from the SSE events or the JSON body of one response. It records times, it derives
 * nothing. Its methods never throw: a bad event becomes `result.error` and sets {@link finished}.
 */
export class ResponseCollector {
  /** The result being built; complete once {@link finished} is true. */
  readonly result: StreamResult;
  /** True after `[DONE]`, a complete JSON body, or an error: later events are ignored. */
  finished = false;
  /** True when `[DONE]` was seen (a stream that ends without it is truncated). */
  sawDone = false;
  readonly #secrets: readonly string[];
  #chars = 0;
  /** Created on the first tool-call delta: most answers have none. */
  #toolCalls: ToolCallDeltas | undefined;
  /** Some choice carried content, reasoning or a tool call, or ended at its length limit: the answer is not empty. */
  #answered = false;

  /** @param sentAtMs monotonic send time (ms). @param secrets strings redacted from error messages. */
  readonly #onFirstToken: ((atMs: number) => void) | undefined;

  /** Whether stream events may be read by their shape (chunk-shape.ts); false only in tests: JSON.parse alone. */
  readonly #scan: boolean;
  /** The shape of the last chunk learned, which the next ones are matched against. */
  #shape: ChunkShape | undefined;
  /** Shapes tried (each a probe) since the last chunk that matched one. */
  #learned = 0;
  /** The answer's content and reasoning as their chunks' pieces, joined when read (see joined()). */
  readonly #content: string[] = [];
  readonly #reasoning: string[] = [];

  /**
   * @param onFirstToken called once as the first token arrives, with its time.
   * @param options.scanChunks false: every event is JSON.parsed (the path a shape must match, for tests).
   */
  /** With return_token_ids: where the prompt's ids go as they come; undefined otherwise (nothing is looked for). */
  readonly #onPromptIds: ((ids: number[]) => void) | undefined;
  readonly #tokenIds: boolean;
  #promptIdsSeen = false;
  /** Told the replica a response's body names (Dynamo's nvext.worker_id), when no header named one. */
  readonly #onReplica: ((replica: string) => void) | undefined;

  constructor(sentAtMs: number, secrets: readonly string[], onFirstToken?: (atMs: number) => void, options: { scanChunks?: boolean; tokenIds?: (ids: number[]) => void; onReplica?: (replica: string) => void } = {}) {
    this.#secrets = secrets;
    this.#onFirstToken = onFirstToken;
    this.#scan = options.scanChunks ?? true;
    this.#onPromptIds = options.tokenIds;
    this.#tokenIds = options.tokenIds !== undefined;
    this.#onReplica = options.onReplica;
    this.result = new CollectedResult(sentAtMs, this.#content, this.#reasoning);
  }

  /** Handles one SSE event's data, arrived at `atMs`. Bound so it can be handed to an SseReader as is. */
  readonly onSseEvent = (data: string, atMs: number): void => {
    if (this.finished) return;
    if (data === '[DONE]') {
      this.sawDone = true;
      this.finished = true;
      this.result.doneAtMs = atMs;
      this.#failIfEmpty(atMs);
      return;
    }
    if (data.length === 0) return; // `data:` with nothing: a keep-alive some servers send
    // A chunk of the stream's usual shape is read without JSON.parse: the shape gives what JSON.parse would
    // (chunk-shape.ts), and it is read below exactly as a parsed chunk is.
    let json: CompletionJson | undefined = this.#scan ? this.#shape?.parse(data) : undefined;
    if (json !== undefined) {
      this.#learned = 0;
    } else {
      json = this.#parse(data, 'stream event', atMs);
      if (json === undefined) return;
      if (this.#scan) this.#learn(data, json);
    }
    const choice = json.choices?.[0];
    // Before the text: the prompt's ids and the worker come in the first chunk, and whoever waits for them may act on
    // the first token.
    if (json.nvext !== undefined) this.noteWorker(json.nvext, data);
    if (this.#tokenIds) this.#takeTokenIds(json, choice);
    if (choice) {
      const delta = choice.delta;
      if (delta) this.#text(delta, atMs);
      if (typeof choice.finish_reason === 'string') this.result.finishReason = choice.finish_reason;
    }
    if (!this.#answered) this.#answered = anyAnswer(json.choices, 'delta');
    if (json.usage) this.#usage(json.usage, json.timings);
  };

  /**
   * A chunk's or body's `nvext` (its text `raw`): the worker that served, from the first that names one, unless a
   * response header named the replica already (that one is the run's --replica-header, or a proxy's).
   */
  noteWorker(nvext: unknown, raw: string): void {
    if (this.result.replica !== undefined) return;
    const replica = dynamoWorkerOf(nvext, raw);
    if (replica === undefined) return;
    this.result.replica = replica;
    this.#onReplica?.(replica);
  }

  /** vLLM's return_token_ids: the prompt's ids (once) and the ids each chunk generated, kept in order. */
  #takeTokenIds(json: CompletionJson, choice: ChoiceJson | undefined): void {
    const prompt = json.prompt_token_ids;
    if (!this.#promptIdsSeen && Array.isArray(prompt) && prompt.every((id) => Number.isInteger(id))) {
      this.#promptIdsSeen = true;
      this.#onPromptIds!(prompt as number[]);
    }
    const ids = choice?.token_ids;
    if (Array.isArray(ids) && ids.length > 0) {
      const out = (this.result.outputTokenIds ??= []);
      for (const id of ids) if (Number.isInteger(id)) out.push(id as number);
    }
  }

  /**
   * After a parsed chunk that carried plain content and nothing else of note (the chunk a stream repeats with new
   * content), learns its shape (ChunkShape): the next chunks of that shape are read without JSON.parse. A chunk that
   * comes once per stream (the role chunk, the last one, the usage chunk) is not learned from: its probe would be
   * wasted.
   */
  #learn(data: string, json: CompletionJson): void {
    if (this.#learned >= MAX_UNUSED_SHAPES || json.usage != null || json.choices?.length !== 1) return;
    const choice = json.choices[0];
    const delta = choice?.delta;
    if (delta == null || choice!.finish_reason != null || delta.tool_calls != null || delta.function_call != null) return;
    // A content with a quote or an escape (code, say) cannot make a shape; the shape in hand stays for the next chunks.
    if (typeof delta.content !== 'string' || delta.content.length === 0 || !isPlain(delta.content)) return;
    this.#learned += 1;
    this.#shape = ChunkShape.learn(data, delta.content) ?? this.#shape;
  }

  /**
   * Parses one completion object (an SSE event's data, or a whole body). A text that is not a JSON object, or an
   * `{"error": ...}` object, fails the request as malformed_stream and gives undefined.
   */
  #parse(text: string, what: 'stream event' | 'response body', atMs: number): CompletionJson | undefined {
    let json: CompletionJson;
    try {
      json = JSON.parse(text) as CompletionJson;
    } catch {
      this.fail({ kind: 'malformed_stream', message: `${what} is not JSON: ${excerpt(text, 80)}` }, atMs);
      return undefined;
    }
    if (json === null || typeof json !== 'object') {
      this.fail({ kind: 'malformed_stream', message: `${what} is not a JSON object: ${excerpt(text, 80)}` }, atMs);
      return undefined;
    }
    if (isErrorObject(json)) {
      this.fail({ kind: 'malformed_stream', message: `error ${what === 'stream event' ? 'event in stream' : 'object in response'}: ${errorText(json)}` }, atMs);
      return undefined;
    }
    return json;
  }

  /** Parses a complete non-streaming JSON body that ended at `atMs`; that time is also its first-token time. */
  acceptJsonBody(text: string, atMs: number): void {
    if (this.finished) return;
    const json = this.#parse(text, 'response body', atMs);
    if (json === undefined) return;
    if (!Array.isArray(json.choices)) {
      this.fail({ kind: 'malformed_stream', message: 'response body has no choices' }, atMs);
      return;
    }
    const choice = json.choices[0];
    if (json.nvext !== undefined) this.noteWorker(json.nvext, text);
    if (this.#tokenIds) this.#takeTokenIds(json, choice);
    if (choice) {
      // A server that ignored stream:true may still send deltas in one body; accept both shapes.
      const fields = choice.message ?? choice.delta;
      // One body is no chunk: output_num_chunks stays 0 for a non-streamed reply, as in the reference.
      if (fields) this.#text(fields, atMs, false);
      if (typeof choice.finish_reason === 'string') this.result.finishReason = choice.finish_reason;
    }
    this.#answered ||= anyAnswer(json.choices, 'message') || anyAnswer(json.choices, 'delta');
    if (json.usage) this.#usage(json.usage, json.timings);
    this.finished = true;
    this.result.doneAtMs = atMs;
    this.#failIfEmpty(atMs);
  }

  /**
   * A reply that ended normally but whose choices carried no content, reasoning or tool call (e.g. only
   * `choices: []` chunks, then [DONE]) fails as empty_answer: it measured nothing (issue #16). A choice that ended at
   * its length limit (`finish_reason: "length"`, as with max_tokens 0) is an answer the request asked for.
   */
  #failIfEmpty(atMs: number): void {
    if (this.#answered || this.result.error !== undefined) return;
    const usage = this.result.usage;
    const said = usage === undefined ? 'no usage' : `usage says ${usage.completionTokens} completion tokens`;
    this.fail({ kind: 'empty_answer', message: `the reply ended normally but no choice carried content, reasoning or a tool call (${said})` }, atMs);
  }

  /** Records a failure at `atMs` (keeps what was collected so far) and finishes. The first failure wins. */
  fail(error: RequestError, atMs: number): void {
    if (this.finished && this.result.error) return;
    this.finished = true;
    this.result.doneAtMs = atMs;
    this.result.error = { ...error, message: redactText(hideMediaData(error.message), this.#secrets) };
  }

  /**
   * A delta's `tool_calls` (chat completions only): assembled by index. Returns the arguments text it added
   * ('' for a delta with only id/name), or undefined when it held no call.
   */
  #toolCallDelta(value: unknown, atMs: number): string | undefined {
    if (value === undefined || value === null) return undefined;
    this.#toolCalls ??= new ToolCallDeltas();
    const before = this.#toolCalls.add(value);
    if (before < 0) return undefined;
    this.result.firstToolCallAtMs ??= atMs;
    this.result.toolCalls = this.#toolCalls.calls();
    this.#chars += before;
    return '';
  }

  #text(fields: TextFields, atMs: number, isChunk = true): void {
    const content = typeof fields.content === 'string' ? fields.content : '';
    let reasoning = '';
    if (typeof fields.reasoning_content === 'string') reasoning = fields.reasoning_content;
    else if (typeof fields.reasoning === 'string') reasoning = fields.reasoning;
    // A tool-call delta is generated output too: it counts as a token chunk (TTFT, ITL) as text does.
    const toolCall = this.#toolCallDelta(fields.tool_calls, atMs);
    this.addText(content, reasoning, atMs, isChunk, toolCall !== undefined);
  }

  // ---- Recording, shared by every endpoint's reader (endpoints/*.ts): times and text, never parsing. ----

  /**
   * Records a chunk's content and reasoning text arrived at `atMs` (nothing when both are empty). `isChunk` false:
   * a whole non-streamed body, which is no chunk (output_num_chunks stays 0, as in the reference). `toolCall`: the
   * chunk also carried a tool call (already recorded), so it counts as a token chunk even without text.
   */
  addText(content: string, reasoning: string, atMs: number, isChunk = true, toolCall = false): void {
    if (content.length === 0 && reasoning.length === 0 && !toolCall) return;
    const result = this.result;
    if (result.firstTokenAtMs === undefined) {
      result.firstTokenAtMs = atMs;
      result.firstTokenChunkText = reasoning + content;
      this.#onFirstToken?.(atMs);
    }
    if (content.length > 0) {
      if (result.firstContentAtMs === undefined) result.firstContentAtMs = atMs;
      this.#content.push(content);
    }
    if (reasoning.length > 0) {
      if (result.firstReasoningAtMs === undefined) result.firstReasoningAtMs = atMs;
      this.#reasoning.push(reasoning);
    }
    result.tokenChunkTimesMs.push(atMs);
    if (isChunk) result.numTokenChunks++;
    this.#chars += content.length + reasoning.length;
    if (this.#chars > MAX_RESPONSE_CHARS) {
      this.fail({ kind: 'other', message: `response text exceeds ${MAX_RESPONSE_CHARS} characters` }, atMs);
    } else if (result.tokenChunkTimesMs.length > MAX_RESPONSE_CHUNKS) {
      this.fail({ kind: 'other', message: `response exceeds ${MAX_RESPONSE_CHUNKS} chunks` }, atMs);
    }
  }

  /** Notes that the reply carried an answer (text, or an end at the length limit): it is not empty_answer. */
  markAnswered(): void {
    this.#answered = true;
  }

  /** The reply ended as it should (`[DONE]`, `response.completed`, a whole body) at `atMs`; an empty one fails. */
  complete(atMs: number): void {
    if (this.finished) return;
    this.sawDone = true;
    this.finished = true;
    this.result.doneAtMs = atMs;
    this.#failIfEmpty(atMs);
  }

  /**
   * Parses one JSON object of the reply (an event's data or a whole body): a text that is not a JSON object fails the
   * request as malformed_stream and gives undefined. Error objects are the caller's to recognise.
   */
  parseObject(text: string, what: 'stream event' | 'response body', atMs: number): Record<string, unknown> | undefined {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.fail({ kind: 'malformed_stream', message: `${what} is not JSON: ${excerpt(text, 80)}` }, atMs);
      return undefined;
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      this.fail({ kind: 'malformed_stream', message: `${what} is not a JSON object: ${excerpt(text, 80)}` }, atMs);
      return undefined;
    }
    return json as Record<string, unknown>;
  }

  #usage(usage: UsageJson, timings: CompletionJson['timings']): void {
    acceptUsage(this.result, chatUsageOf(usage, timings));
  }
}

/**
 * A StreamResult whose content and reasoning are joined when first read. A class, not an object literal with
 * `get content()`: each literal made new getter functions, and V8 cannot share a hidden class between objects whose
 * accessors differ, so every result was a slow dictionary-mode object (%HasFastProperties false), read and written by
 * hash lookups in the client's hot path and in buildRecord (issue 17). Getters on the prototype keep results fast and
 * of one shape.
 */
class CollectedResult implements StreamResult {
  sentAtMs: number;
  tokenChunkTimesMs: number[] = [];
  doneAtMs: number;
  numTokenChunks = 0;
  readonly #content: string[];
  readonly #reasoning: string[];

  constructor(sentAtMs: number, content: string[], reasoning: string[]) {
    this.sentAtMs = sentAtMs;
    this.doneAtMs = sentAtMs;
    this.#content = content;
    this.#reasoning = reasoning;
  }

  get content(): string {
    return joined(this.#content);
  }

  get reasoning(): string {
    return joined(this.#reasoning);
  }

  /**
   * Its JSON with the texts, as the literal it replaced gave (its getters were own properties): JSON.stringify reads
   * own properties only, and a caller that logs or checks a result's JSON (a secret must not be in it) needs them.
   */
  toJSON(): StreamResult {
    return { ...this, content: this.content, reasoning: this.reasoning };
  }
}

/**
 * The text of `pieces`, joined once and kept as the one piece. Why not `+=` per chunk: that makes a chain of one V8
 * cons string per chunk, which every reader (the tokenizer's scan for the expected cache and the next prompt's counts,
 * JSON.stringify of the next request) must first flatten and then reads through the chain's head: in a run, encoding
 * a 128-chunk answer so built took 47 µs against 9 µs for the same text flat. join('') makes one flat string.
 */
function joined(pieces: string[]): string {
  if (pieces.length > 1) pieces.splice(0, pieces.length, pieces.join(''));
  return pieces[0] ?? '';
}

/** True when some choice's `delta`/`message` has content, reasoning or a tool call, or the choice ended at its length limit. */
function anyAnswer(choices: ChoiceJson[] | null | undefined, field: 'delta' | 'message'): boolean {
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) {
    if (choice === null || typeof choice !== 'object') continue;
    if (choice.finish_reason === 'length') return true;
    const fields = choice[field];
    if (fields === null || typeof fields !== 'object') continue;
    if (nonEmptyText(fields.content) || nonEmptyText(fields.reasoning_content) || nonEmptyText(fields.reasoning)) return true;
    if ((Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0) || (typeof fields.function_call === 'object' && fields.function_call !== null)) return true;
  }
  return false;
}

function nonEmptyText(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
