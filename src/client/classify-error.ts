import { escapeControl } from '../util/control-chars.js';
import { hideMediaData } from './hide-media-data.js';
import { redactText } from '../util/redact-text.js';
import type { ErrorKind, RequestError } from './types.js';

/** Longest error message kept (characters); longer ones are cut with an ellipsis. */
const MAX_MESSAGE_CHARS = 300;

const RESET_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'ECONNABORTED',
  'UND_ERR_CLOSED',
]);
const DNS_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);

/**
 * Turns text into one line for an error message: collapses line breaks and runs of whitespace, replaces every
 * `secrets` entry (api key, header values) with `[redacted]` (redactText), and cuts it to `maxChars`.
 */
export function sanitizeMessage(text: string, secrets: readonly string[], maxChars: number = MAX_MESSAGE_CHARS): string {
  // Control characters (escape sequences, NUL) shown as \xNN: the message reaches files and terminals (issue #35).
  const line = escapeControl(redactText(hideMediaData(text).replace(/\s+/g, ' ').trim(), secrets));
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}

/** The error codes on an error and its causes (undici wraps socket errors; happy eyeballs gives an AggregateError). */
export function collectCodes(error: unknown, codes: string[] = [], depth = 0): string[] {
  if (depth > 4 || typeof error !== 'object' || error === null) return codes;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') codes.push(code);
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested)) for (const inner of nested) collectCodes(inner, codes, depth + 1);
  collectCodes((error as { cause?: unknown }).cause, codes, depth + 1);
  return codes;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    let message = error.message;
    // An AggregateError's own message is often empty: name its parts.
    if (message.length === 0 && Array.isArray((error as { errors?: unknown }).errors)) {
      message = ((error as AggregateError).errors as unknown[]).map((inner) => describe(inner)).join('; ');
    }
    const cause = (error as { cause?: unknown }).cause;
    const causeText = cause instanceof Error && cause.message && !message.includes(cause.message) ? ` (${cause.message})` : '';
    return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}${causeText}` : `${message}${causeText}`;
  }
  return String(error);
}

/**
 * Classifies an error thrown by the socket or undici (not a timeout or abort of ours: the caller knows those).
 * ECONNREFUSED is connect_refused; ECONNRESET, EPIPE, UND_ERR_SOCKET ("other side closed") are connect_reset;
 * ENOTFOUND and EAI_AGAIN are dns; a connect timeout is timeout_ttft (no token came in time). A compressed body that
 * cannot be decoded (content-encoding.ts) is truncated_stream when its data ended early, else malformed_stream.
 * Anything else is other.
 */
export function classifyNetworkError(error: unknown, secrets: readonly string[]): RequestError {
  const codes = collectCodes(error);
  let kind: ErrorKind = 'other';
  if (codes.includes('ECONNREFUSED')) kind = 'connect_refused';
  else if (codes.some((code) => DNS_CODES.has(code))) kind = 'dns';
  else if (codes.some((code) => RESET_CODES.has(code))) kind = 'connect_reset';
  else if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) kind = 'timeout_ttft';
  else if (error instanceof Error && error.name === 'ContentDecodingError') kind = codes.includes('Z_BUF_ERROR') ? 'truncated_stream' : 'malformed_stream';
  else if (error instanceof Error && /other side closed|socket hang up/i.test(error.message)) kind = 'connect_reset';
  return { kind, message: sanitizeMessage(describe(error), secrets) };
}
