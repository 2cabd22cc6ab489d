import type { IncomingMessage, ServerResponse } from 'node:http';
import { JsonSyntaxError, parseJsonInWorker, WORKER_PARSE_BYTES } from './json-worker.js';
import { placeLargeStrings, type PiecesAt } from './large-strings.js';

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

/** Bodies of a known length over this many bytes are copied into one Buffer as they arrive, not joined at the end. */
const COPY_AS_IT_COMES_BYTES = 64 * 1024;
/**
 * A large body's reading lets the loop go after each this many bytes: libuv reads a socket up to 32 times per
 * readiness event, so a 3 MB body arriving fast came as ~2 MB in one go (the kernel's copies and ours, 2-4 ms).
 */
const BYTES_PER_TURN = 256 * 1024;

/**
 * Reads the whole request body up to MAX_BODY_BYTES; rejects with a 413 HttpError beyond it. A large body with a
 * Content-Length is copied chunk by chunk into a Buffer of that size as it arrives, so no step joins it in one piece.
 */
function readBodyBytes(req: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      req.resume();
      reject(new HttpError(413, `Request body of ${declared} bytes exceeds the limit of ${limitBytes} bytes.`));
      return;
    }
    // Node's parser ends a request's body at its Content-Length, so it fits.
    const into = Number.isFinite(declared) && declared > COPY_AS_IT_COMES_BYTES ? Buffer.allocUnsafeSlow(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let sinceTurn = 0;
    let failed = false;
    const resume = (): void => {
      if (!failed) req.resume();
    };
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      if (size + chunk.length > limitBytes) {
        failed = true;
        chunks.length = 0;
        reject(new HttpError(413, `Request body exceeds the limit of ${limitBytes} bytes.`));
        return;
      }
      if (into !== undefined) chunk.copy(into, size);
      else chunks.push(chunk);
      size += chunk.length;
      sinceTurn += chunk.length;
      if (into !== undefined && sinceTurn >= BYTES_PER_TURN && size < into.length) {
        // Paused, the socket's reading stops once the request's buffer fills; it resumes on the loop's next turn.
        sinceTurn = 0;
        req.pause();
        setImmediate(resume);
      }
    });
    req.on('end', () => {
      if (failed) return;
      if (into !== undefined) resolve(into.subarray(0, size));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (!failed) reject(error);
      failed = true;
    });
  });
}

function invalidJson(message: string): HttpError {
  return new HttpError(400, `Invalid JSON in the request body: ${message}`);
}

/** Parses a JSON body; invalid JSON is a 400. */
function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidJson((error as Error).message);
  }
}

/**
 * Reads and parses a JSON request body; invalid JSON is a 400. A body over WORKER_PARSE_BYTES is decoded and parsed
 * in a worker thread (json-worker.ts): a 3 MB body held the loop ~10 ms (issue #14); its large strings come back as
 * UTF-8 and are decoded in slices (large-strings.ts). Same value, same errors; but where `piecesAt` allows, a large
 * string may come as a PartsText of its pieces (request-parse.ts says where its readers take one).
 */
export async function readJsonBody(req: IncomingMessage, piecesAt?: PiecesAt): Promise<unknown> {
  const bytes = await readBodyBytes(req);
  if (bytes.length <= WORKER_PARSE_BYTES) return parseJsonBody(bytes.toString('utf8'));
  let parse;
  try {
    parse = await parseJsonInWorker(bytes);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw invalidJson(error.message);
    throw error;
  }
  return placeLargeStrings(parse.value, parse.large, piecesAt);
}
