// Test helpers for the simulator tests (not a test file): raw HTTP over node:http, SSE splitting, metric parsing.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** What a raw exchange produced: status, headers, the body text received, and the socket error if one ended it. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Arrival time (performance.now) of each body chunk. */
  chunkTimesMs: number[];
  error: Error | null;
  /** True when the body ended cleanly. */
  complete: boolean;
}

/** POSTs JSON (or GETs when body is undefined) and collects the whole response, resolving also when the socket dies. */
export function raw(baseUrl: string, path: string, body?: unknown, options: { method?: string; rawBody?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve) => {
    const payload = options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const req = httpRequest(new URL(path, baseUrl), {
      method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
      headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      agent: false,
    });
    const out: RawResponse = { status: 0, headers: {}, body: '', chunkTimesMs: [], error: null, complete: false };
    let settled = false;
    const settle = (): void => {
      if (!settled) {
        settled = true;
        resolve(out);
      }
    };
    req.on('error', (error) => {
      out.error = error;
      settle();
    });
    req.on('response', (res) => {
      out.status = res.statusCode ?? 0;
      out.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        out.chunkTimesMs.push(performance.now());
        out.body += chunk;
      });
      res.on('end', () => {
        out.complete = true;
        settle();
      });
      res.on('error', (error) => {
        out.error = error;
        settle();
      });
      res.on('close', settle);
    });
    req.end(payload);
  });
}

/** Opens a streaming POST and resolves once the headers and the first `minBytes` of body arrived; `close()` destroys it. */
export function openStream(baseUrl: string, path: string, body: unknown, minBytes = 1): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(new URL(path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
    req.on('error', () => undefined);
    req.on('response', (res) => {
      let got = 0;
      let done = false;
      const ready = (): void => {
        if (!done) {
          done = true;
          resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
        }
      };
      res.on('error', () => undefined);
      res.on('data', (chunk: Buffer) => {
        got += chunk.length;
        if (got >= minBytes) ready();
      });
      if (minBytes === 0) ready();
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The JSON payloads of `data:` lines, `[DONE]` as the string '[DONE]', unparseable lines as `{ malformed: text }`. */
export function sseEvents(body: string): unknown[] {
  const events: unknown[] = [];
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') events.push('[DONE]');
    else {
      try {
        events.push(JSON.parse(data));
      } catch {
        events.push({ malformed: data });
      }
    }
  }
  return events;
}

/** A Prometheus sample value by exact series text, e.g. `vllm:prompt_tokens_total{model_name="m"}`; undefined if absent. */
export function metricValue(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** Polls `check` every 10 ms until it returns true or `timeoutMs` passes (then throws `what`). */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
