import { REDACTED } from '../util/redact-text.js';

export { REDACTED } from '../util/redact-text.js';

// Key names whose values are secrets. `token$` catches api_token / hf_token but not count fields such as max_tokens or
// input_num_tokens, which end in "tokens".
const SECRET_KEY = /api[-_]?key|authorization|token$|secret|password/i;
// "Name: value" or "Name=value" (a --header string).
const HEADER_STRING = /^\s*([A-Za-z0-9_.-]+)\s*([:=])\s*\S/;
// Credentials embedded in a URL: scheme://user:password@host (the password is the secret), or scheme://user@host
// (a lone user name is the credential, e.g. a token: curl sends it as Basic auth with an empty password).
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/[^/@:\s]*):[^/@\s]*@/i;
const URL_LONE_USER = /^([a-z][a-z0-9+.-]*:\/\/)[^/@:\s]+@/i;

/** True when a key names a secret (api key, authorization, *token, secret, password), but not a *_tokens count. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * A deep copy of `value` with secrets replaced by "[redacted]": the value of any key that isSecretKey(), a header string
 * "Authorization: x" (its value), the password of a URL "http://user:pass@host" and a URL's lone user "http://token@host".
 * Plain objects and arrays are copied; other objects (Date, ...) are kept as they are; a cycle becomes "[circular]".
 */
export function redactSecrets<T>(value: T): T {
  return redactValue(value, new WeakSet()) as T;
}

function redactValue(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (Array.isArray(value)) {
    seen.add(value);
    const copy = value.map((item) => redactValue(item, seen));
    seen.delete(value);
    return copy;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  seen.add(value);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = isSecretKey(key) && item !== null && item !== undefined ? REDACTED : redactValue(item, seen);
  }
  seen.delete(value);
  return copy;
}

function redactString(text: string): string {
  const header = HEADER_STRING.exec(text);
  if (header !== null && isSecretKey(header[1]!)) return `${header[1]}${header[2] === ':' ? ': ' : '='}${REDACTED}`;
  return text.replace(URL_CREDENTIALS, `$1:${REDACTED}@`).replace(URL_LONE_USER, `$1${REDACTED}@`);
}
