import { Agent, request } from '../util/undici.js';
import { letLoopGo } from '../util/loop-turns.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { headerSecrets, redactText } from '../util/redact-text.js';
import { encodeMessagesBody, sendableBody } from './request-body.js';

/*
 * The server's own token ids (issue #30): a prompt as the server renders and tokenizes it, asked of the server
 * itself, so that the expected-cache model counts in the server's units even when no local tokenizer matches the
 * model. Two engines offer it:
 * - llama.cpp's llama-server: POST /apply-template {messages, tools} -> {prompt} (the chat template as the chat
 *   endpoint applies it, generation prompt included), then POST /tokenize {content, add_special, parse_special} ->
 *   {tokens}. Its chat endpoint tokenizes the templated prompt with special tokens parsed (tools/server/utils.hpp,
 *   tokenize_input_prompts): checked against a live server, /tokenize's count equals usage.prompt_tokens.
 * - vLLM: POST /tokenize {model, messages, tools, add_generation_prompt: true} -> {tokens, count, max_model_len}
 *   (vllm/entrypoints/openai/protocol.py, TokenizeChatRequest; add_special_tokens defaults to false there as in
 *   its chat requests).
 * - SGLang: POST /v1/tokenize {model, messages, tools} -> {tokens, count, max_model_len}: the messages rendered by its
 *   chat serving and tokenized with no special tokens added, as its chat requests are (python/sglang/srt/entrypoints/
 *   openai/serving_tokenize.py; `messages` since May 2026, older releases answer an error: the check says so).
 * An answer's text is tokenized alone (llama.cpp: /tokenize with no special tokens added; vLLM and SGLang: their
 * tokenize endpoint with `prompt`). Every call is bounded by a timeout and the run's stop signal; its cost is counted.
 */

/** Which tokenize endpoints a server has. */
export type ServerTokenizerKind = 'llamacpp' | 'vllm' | 'sglang';

/** What a ServerTokenizer needs: plain data, so that worker threads can each make their own. */
export interface ServerTokenizerSpec {
  kind: ServerTokenizerKind;
  /** The server's root URL (no /v1), credentials removed. */
  rootUrl: string;
  /** Auth and --header headers, sent with every call. */
  headers: Readonly<Record<string, string>>;
  /** The model name vLLM's /tokenize takes. */
  model: string;
  /** Longest wait for one call, ms. @default 30000 */
  timeoutMs?: number;
}

/** What tokenizing on the server cost: calls, bytes each way, failures, and the time calls were in flight. */
export interface ServerTokenizerStats {
  calls: number;
  bytes_sent: number;
  bytes_received: number;
  failures: number;
  /** Sum of each call's duration, ms (calls overlap with requests, never with their sends). */
  call_ms: number;
}

/** How results.json and the terminal name a server's tokenizer, e.g. `server (llama.cpp /apply-template + /tokenize)`. */
export function serverTokenizerLabel(kind: ServerTokenizerKind): string {
  if (kind === 'llamacpp') return 'server (llama.cpp /apply-template + /tokenize)';
  return kind === 'vllm' ? 'server (vLLM return_token_ids, else /tokenize)' : 'server (SGLang /v1/tokenize)';
}

/** Tokens per slice of a large answer scanned between yields to the event loop (about a millisecond). */
const SCAN_SLICE_BYTES = 256 * 1024;

/** Tokenizes on the server (see the comment at the top). */
export class ServerTokenizer {
  readonly spec: ServerTokenizerSpec;
  readonly stats: ServerTokenizerStats = { calls: 0, bytes_sent: 0, bytes_received: 0, failures: 0, call_ms: 0 };
  readonly #agent = new Agent({ connections: 8, pipelining: 1 });
  readonly #signal: AbortSignal | undefined;
  readonly #secrets: string[];

  constructor(spec: ServerTokenizerSpec, signal?: AbortSignal) {
    this.spec = { ...spec, rootUrl: spec.rootUrl.replace(/\/+$/, '') };
    this.#signal = signal;
    this.#secrets = Object.values(spec.headers).flatMap((value) => headerSecrets(value));
  }

  /** A human label, e.g. `server (llama.cpp /apply-template + /tokenize)`. */
  get label(): string {
    return serverTokenizerLabel(this.spec.kind);
  }

  /** The prompt's ids as the server builds them from `messages` (and `tools`), generation prompt included. */
  async promptIds(messages: readonly ChatMessage[], tools?: readonly unknown[]): Promise<Uint32Array> {
    const withTools = tools !== undefined && tools.length > 0 ? { tools } : {};
    if (this.spec.kind === 'vllm') {
      return this.#tokens('/tokenize', encodeMessagesBody(messages, { model: this.spec.model, add_generation_prompt: true, ...withTools }));
    }
    if (this.spec.kind === 'sglang') return this.#tokens('/v1/tokenize', encodeMessagesBody(messages, { model: this.spec.model, ...withTools }));
    const applied = await this.#post('/apply-template', encodeMessagesBody(messages, withTools));
    const prompt = (JSON.parse(applied.toString('utf8')) as { prompt?: unknown }).prompt;
    if (typeof prompt !== 'string') throw new Error('POST /apply-template: the answer has no "prompt" string');
    return this.#tokens('/tokenize', Buffer.from(JSON.stringify({ content: prompt, add_special: true, parse_special: true })));
  }

  /** The ids of a text alone, no special tokens added or parsed (an answer as the server generated it). */
  textIds(text: string): Promise<Uint32Array> {
    if (this.spec.kind === 'llamacpp') return this.#tokens('/tokenize', Buffer.from(JSON.stringify({ content: text, add_special: false, parse_special: false })));
    const body = { model: this.spec.model, prompt: text, add_special_tokens: false };
    return this.#tokens(this.spec.kind === 'vllm' ? '/tokenize' : '/v1/tokenize', Buffer.from(JSON.stringify(body)));
  }

  /** Whether the server answers both calls (a short probe conversation): false, with the reason, when it does not. */
  async check(): Promise<{ ok: true } | { ok: false; reason: string }> {
    try {
      const ids = await this.promptIds([{ role: 'user', content: 'Hello' }]);
      return ids.length > 0 ? { ok: true } : { ok: false, reason: 'it returned no tokens' };
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
  }

  async close(): Promise<void> {
    await this.#agent.destroy();
  }

  async #tokens(path: string, body: Buffer | Buffer[]): Promise<Uint32Array> {
    return scanTokens(await this.#post(path, body), path);
  }

  async #post(path: string, body: Buffer | Buffer[]): Promise<Buffer> {
    const timeoutMs = this.spec.timeoutMs ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = this.#signal === undefined ? timeout : AbortSignal.any([this.#signal, timeout]);
    const t0 = performance.now();
    this.stats.calls += 1;
    const sendable = sendableBody(body, { ...this.spec.headers, 'content-type': 'application/json' });
    this.stats.bytes_sent += Array.isArray(body) ? body.reduce((n, b) => n + b.length, 0) : body.length;
    try {
      const response = await request(`${this.spec.rootUrl}${path}`, { method: 'POST', headers: sendable.headers, body: sendable.body as never, dispatcher: this.#agent, signal });
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) chunks.push(chunk);
      const answer = Buffer.concat(chunks);
      this.stats.bytes_received += answer.length;
      if (response.statusCode !== 200) {
        throw new Error(`POST ${path} answered HTTP ${response.statusCode}: ${redactText(answer.subarray(0, 160).toString('utf8').replace(/\s+/g, ' '), this.#secrets)}`);
      }
      return answer;
    } catch (error) {
      this.stats.failures += 1;
      if (timeout.aborted) throw new Error(`POST ${path}: no answer within ${timeoutMs} ms`);
      throw error instanceof Error ? new Error(redactText(error.message, this.#secrets)) : error;
    } finally {
      this.stats.call_ms += performance.now() - t0;
    }
  }
}

/**
 * The `tokens` array of a tokenize answer, read by hand rather than by JSON.parse: a 1M-token prompt's answer is ~7 MB
 * of digits, which JSON.parse holds the loop for in one piece; here it is scanned in slices with the loop let go
 * between them. Only plain integer ids are accepted (llama.cpp's `with_pieces` objects are never asked for).
 */
async function scanTokens(answer: Buffer, path: string): Promise<Uint32Array> {
  const key = answer.indexOf('"tokens"');
  const open = key < 0 ? -1 : answer.indexOf(0x5b /* [ */, key);
  if (open < 0) throw new Error(`POST ${path}: the answer has no "tokens" list`);
  let ids: Uint32Array<ArrayBuffer> = new Uint32Array(Math.max(16, (answer.length - open) >> 2));
  let n = 0;
  let value = -1;
  for (let i = open + 1; i < answer.length; i++) {
    if ((i & (SCAN_SLICE_BYTES - 1)) === 0) await letLoopGo();
    const c = answer[i]!;
    if (c >= 0x30 && c <= 0x39) value = value < 0 ? c - 0x30 : value * 10 + (c - 0x30);
    else if (c === 0x2c /* , */ || c === 0x5d /* ] */) {
      if (value >= 0) {
        if (n === ids.length) ids = grow(ids);
        ids[n++] = value;
      }
      value = -1;
      if (c === 0x5d) return ids.subarray(0, n);
    } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) throw new Error(`POST ${path}: "tokens" holds something other than integer ids`);
  }
  throw new Error(`POST ${path}: the "tokens" list is cut short`);
}

function grow(ids: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const bigger = new Uint32Array(ids.length * 2);
  bigger.set(ids);
  return bigger;
}
