import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body accepted, bytes (413 beyond). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** An HTTP error answer in OpenAI's (and vLLM's) error shape. */
export class HttpError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** The error's `code`; default: the status, as vLLM sends it. */
  readonly code: string | number;

  constructor(status: number, message: string, options: { type?: string; param?: string | null; headers?: Record<string, string>; code?: string } = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.type = options.type ?? defaultType(status);
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    this.code = options.code ?? status;
  }
}

function defaultType(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequestError';
    case 404:
      return 'NotFoundError';
    case 405:
      return 'MethodNotAllowedError';
    case 413:
      return 'RequestEntityTooLargeError';
    case 429:
      return 'RateLimitError';
    case 503:
      return 'ServiceUnavailableError';
    default:
      return 'InternalServerError';
  }
}

/** Sends `body` as JSON with a Content-Length. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Sends an HttpError as `{"error":{"message","type","param","code"}}`. */
export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } }, { ...error.headers });
}

/** Reads the whole request body up to MAX_BODY_BYTES; rejects with a 413 HttpError beyond it. */
export function readBody(req: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      req.resume();
      reject(new HttpError(413, `Request body of ${declared} bytes exceeds the limit of ${limitBytes} bytes.`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limitBytes) {
        failed = true;
        chunks.length = 0;
        reject(new HttpError(413, `Request body exceeds the limit of ${limitBytes} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (error) => {
      if (!failed) reject(error);
      failed = true;
    });
  });
}

/** Parses a JSON body; invalid JSON is a 400. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, `Invalid JSON in the request body: ${(error as Error).message}`);
  }
}
