import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Scheduler, SchedulerRequest, SchedulerRequestListener } from './scheduler.js';
import type { Fault } from './faults.js';
import type { OutputPump } from './output-pump.js';
import { ResponsesEvents } from './responses-events.js';
import type { TraceLine } from './request-trace.js';

/** What an Exchange needs from its server. */
export interface ExchangeContext {
  readonly scheduler: Scheduler;
  readonly modelName: string;
  /** Where token writes queue up, so that a step's outputs go out in vLLM-sized chunks (see OutputPump). */
  readonly outputs: OutputPump;
  /** Called once when the exchange ends, with its trace line. */
  done(exchange: Exchange, line: TraceLine): void;
}

/** The fixed parts of one generation exchange. Token counts in tokens; `arrivalMs` is performance.now() ms. */
export interface ExchangeInit {
  id: string;
  kind: 'chat' | 'completion' | 'responses';
  stream: boolean;
  includeUsage: boolean;
  promptTokens: number;
  arrivalMs: number;
  fault: Fault | null;
  /** Called with the whole answer when the exchange ends normally (the Responses API stores it). */
  onAnswer?: (content: string) => void;
  /** The tool a chat answer calls (its tokens become the call's arguments), or null for a text answer. */
  toolCall?: string | null;
}

/** JSON-escaped text without its quotes: a fragment of a JSON string. */
function jsonFragment(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

/** performance.now() ms to epoch ms (the trace's scale). */
function epochMs(perfMs: number): number {
  return performance.timeOrigin + perfMs;
}

/**
 * One generation request from the engine's tokens to the socket: SSE chunks or one JSON body, plus the fault
 * that was drawn for it (reset, truncate, malformed, trickle, stall), client disconnects and its trace line.
 */
export class Exchange implements SchedulerRequestListener {
  readonly #ctx: ExchangeContext;
  readonly #res: ServerResponse;
  readonly #init: ExchangeInit;
  readonly #created = Math.floor(Date.now() / 1000);
  readonly #chunkHead: string;
  /** The Responses API's event formatter (kind 'responses'). */
  readonly #responses: ResponsesEvents | null;
  #engineReq: SchedulerRequest | null = null;
  #content = '';
  #tokensWritten = 0;
  #firstTokenMs: number | null = null;
  #ended = false;
  #faultFired = false;
  /** Trickle: tokens not yet written, and the pacing timer. */
  #queue: { text: string; finish: 'stop' | 'length' | null }[] = [];
  #pacer: NodeJS.Timeout | null = null;

  constructor(ctx: ExchangeContext, res: ServerResponse, init: ExchangeInit) {
    this.#ctx = ctx;
    this.#res = res;
    this.#init = init;
    const object = init.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    this.#responses = init.kind === 'responses' ? new ResponsesEvents(init.id, ctx.modelName, this.#created) : null;
    this.#chunkHead = `{"id":${JSON.stringify(init.id)},"object":"${object}","created":${this.#created},"model":${JSON.stringify(ctx.modelName)},"choices":[`;
  }

  /** Starts watching the socket (after the engine accepted the request, or for a stall): a disconnect ends the exchange. */
  begin(req: SchedulerRequest | null): void {
    this.#engineReq = req;
    this.#res.on('close', () => {
      if (!this.#ended) this.#finish(this.#faultFired ? `fault:${this.#init.fault!.kind}` : 'client_closed');
    });
  }

  /** Sends the headers now (streams and stalls), so the client sees the 200 before the first token. */
  openStream(): void {
    this.#res.writeHead(200, this.#init.stream ? SSE_HEADERS : { 'content-type': 'application/json' });
    if (this.#responses !== null && this.#init.stream && this.#init.fault?.kind !== 'stall') this.#res.write(this.#responses.opened());
    else this.#res.flushHeaders();
  }

  /** The server is closing: end the response where it stands. */
  shutdown(): void {
    if (this.#ended) return;
    const headersSent = this.#res.headersSent;
    this.#finish('server_closed');
    if (headersSent) this.#res.end();
    else this.#res.destroy();
  }

  onToken(text: string, _index: number, _atMs: number, finishReason: 'stop' | 'length' | null): void {
    if (this.#ended) return;
    const fault = this.#init.fault;
    if (fault?.kind === 'trickle') {
      this.#queue.push({ text, finish: finishReason });
      if (this.#pacer === null) this.#pace(fault.param);
      return;
    }
    this.#ctx.outputs.push(() => {
      if (!this.#ended) this.#deliver(text, finishReason);
    });
  }

  onFinish(): void {
    // The last onToken carried the finish reason; nothing more to do.
  }

  #pace(intervalMs: number): void {
    this.#pacer = setTimeout(() => {
      this.#pacer = null;
      const next = this.#queue.shift();
      if (next === undefined || this.#ended) return;
      this.#deliver(next.text, next.finish);
      if (this.#queue.length > 0) this.#pace(intervalMs);
    }, intervalMs);
  }

  #deliver(text: string, finishReason: 'stop' | 'length' | null): void {
    const fault = this.#init.fault;
    if (!this.#init.stream) {
      this.#content += text;
      this.#tokensWritten += 1;
      if (finishReason !== null) this.#sendBody(finishReason);
      return;
    }
    if (this.#responses !== null) return this.#deliverResponses(this.#responses, text, finishReason);
    const tool = this.#init.kind === 'chat' ? (this.#init.toolCall ?? null) : null;
    const finish = finishReason === null ? 'null' : tool !== null ? '"tool_calls"' : `"${finishReason}"`;
    let choice: string;
    if (tool !== null) {
      // OpenAI's tool-call deltas: the call's id, type and name first (arguments ""), then the arguments in fragments.
      const fragment = `${this.#tokensWritten === 0 ? '{"input": "' : ''}${jsonFragment(text)}${finishReason !== null ? '"}' : ''}`;
      choice = `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(fragment)}}}]},"logprobs":null,"finish_reason":${finish}}`;
    } else {
      choice =
        this.#init.kind === 'chat'
          ? `{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${finish}}`
          : `{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${finish}}`;
    }
    let out = '';
    if (this.#tokensWritten === 0 && this.#init.kind === 'chat') {
      const first =
        tool === null
          ? '{"role":"assistant","content":""}'
          : `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_${this.#init.id}","type":"function","function":{"name":${JSON.stringify(tool)},"arguments":""}}]}`;
      out += `data: ${this.#chunkHead}{"index":0,"delta":${first},"logprobs":null,"finish_reason":null}]}\n\n`;
    }
    out += `data: ${this.#chunkHead}${choice}]}\n\n`;
    this.#res.write(out);
    if (this.#wrote(fault, finishReason) || finishReason === null) return;
    let tail = '';
    if (this.#init.includeUsage) tail += `data: ${this.#chunkHead}],"usage":${JSON.stringify(this.#usage())}}\n\n`;
    tail += 'data: [DONE]\n\n';
    this.#finish(this.#faultFired ? `fault:${fault!.kind}` : 'ok');
    this.#res.end(tail);
  }

  /** #deliver for the Responses API: typed events, the whole response at the end, no [DONE]. */
  #deliverResponses(events: ResponsesEvents, text: string, finishReason: 'stop' | 'length' | null): void {
    const fault = this.#init.fault;
    this.#content += text;
    this.#res.write(events.delta(text, this.#tokensWritten === 0));
    if (this.#wrote(fault, finishReason) || finishReason === null) return;
    const usage = this.#usage() as { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    const tail = events.finished(this.#content, finishReason, { inputTokens: usage.prompt_tokens, cachedTokens: usage.prompt_tokens_details.cached_tokens, outputTokens: usage.completion_tokens });
    this.#answered();
    this.#finish(this.#faultFired ? `fault:${fault!.kind}` : 'ok');
    this.#res.end(tail);
  }

  /** The answer is complete and sent in full: hand it to whoever keeps it (the Responses API's store). */
  #answered(): void {
    if (!this.#faultFired) this.#init.onAnswer?.(this.#content);
  }

  /**
   * After a token's bytes are written: counts it, stamps the first token, strikes the stream's fault at its moment.
   * Returns true when the fault ended the response.
   */
  #wrote(fault: Fault | null, finishReason: string | null): boolean {
    this.#tokensWritten += 1;
    if (this.#firstTokenMs === null) {
      // node:http corks the socket on a write and uncorks it on the next tick, after the whole step has been
      // written: the traced first-token time is when the bytes go to the socket, so it is taken on that tick.
      this.#firstTokenMs = performance.now();
      process.nextTick(this.#stampFirstTokenFlush);
    }
    const strikeNow = fault !== null && !this.#faultFired && (this.#tokensWritten >= fault.afterTokens || finishReason !== null);
    return strikeNow && this.#strike(fault);
  }

  readonly #stampFirstTokenFlush = (): void => {
    this.#firstTokenMs = performance.now();
  };

  /** Applies a stream fault at its moment. Returns true when the response is over. */
  #strike(fault: Fault): boolean {
    switch (fault.kind) {
      case 'malformed':
        this.#faultFired = true;
        this.#res.write('data: {"choices": [\n\n');
        return false;
      case 'reset':
        this.#faultFired = true;
        this.#abortEngine();
        this.#finish('fault:reset');
        this.#res.socket?.destroy();
        return true;
      case 'truncate':
        this.#faultFired = true;
        this.#abortEngine();
        this.#finish('fault:truncate');
        this.#res.end();
        return true;
      default:
        return false;
    }
  }

  #usage(): object {
    const req = this.#engineReq;
    const completion = req?.outputTokens ?? this.#tokensWritten;
    return {
      prompt_tokens: this.#init.promptTokens,
      completion_tokens: completion,
      total_tokens: this.#init.promptTokens + completion,
      prompt_tokens_details: { cached_tokens: req?.cachedTokens ?? 0 },
    };
  }

  #sendBody(finishReason: 'stop' | 'length'): void {
    const kind = this.#init.fault?.kind;
    const res = this.#res;
    this.#firstTokenMs = performance.now();
    const tool = this.#init.kind === 'chat' ? (this.#init.toolCall ?? null) : null;
    const toolCalls = tool === null ? undefined : [{ id: `call_${this.#init.id}`, type: 'function', function: { name: tool, arguments: JSON.stringify({ input: this.#content }) } }];
    const choice =
      this.#init.kind !== 'chat'
        ? { index: 0, text: this.#content, logprobs: null, finish_reason: finishReason }
        : toolCalls === undefined
          ? { index: 0, message: { role: 'assistant', content: this.#content }, logprobs: null, finish_reason: finishReason }
          : { index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, logprobs: null, finish_reason: 'tool_calls' };
    const usage = this.#usage() as { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    const counts = { inputTokens: usage.prompt_tokens, cachedTokens: usage.prompt_tokens_details.cached_tokens, outputTokens: usage.completion_tokens };
    const status = finishReason === 'length' ? 'incomplete' : 'completed';
    const body = this.#responses !== null ? JSON.stringify(this.#responses.response(status, this.#content, finishReason, counts)) : JSON.stringify({
      id: this.#init.id,
      object: this.#init.kind === 'chat' ? 'chat.completion' : 'text_completion',
      created: this.#created,
      model: this.#ctx.modelName,
      choices: [choice],
      usage,
    });
    if (kind === 'reset') {
      this.#faultFired = true;
      this.#finish('fault:reset');
      res.socket?.destroy();
      return;
    }
    const text = kind === 'malformed' ? '{"choices": [' : body;
    if (kind === 'malformed' || kind === 'truncate') this.#faultFired = true;
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    if (kind === 'truncate') {
      // Promise the full length, send half, then close: the client sees a body that ends early.
      this.#finish('fault:truncate');
      res.write(text.slice(0, Math.floor(text.length / 2)), () => res.socket?.destroy());
      return;
    }
    this.#answered();
    this.#finish(this.#faultFired ? `fault:${kind!}` : 'ok');
    res.end(text);
  }

  #abortEngine(): void {
    if (this.#engineReq !== null) this.#ctx.scheduler.abort(this.#engineReq);
  }

  #finish(outcome: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#pacer !== null) clearTimeout(this.#pacer);
    this.#pacer = null;
    this.#abortEngine();
    const req = this.#engineReq;
    const nowMs = performance.now();
    this.#ctx.done(this, {
      id: this.#init.id,
      arrival_ms: epochMs(this.#init.arrivalMs),
      first_token_ms: this.#firstTokenMs === null ? null : epochMs(this.#firstTokenMs),
      tokens_written: this.#tokensWritten,
      end_ms: epochMs(nowMs),
      prompt_tokens: this.#init.promptTokens,
      cached_tokens: req?.cachedTokens ?? 0,
      status: this.#res.headersSent ? this.#res.statusCode : 0,
      outcome,
    });
  }
}
