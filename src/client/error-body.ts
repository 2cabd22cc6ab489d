/*
 * Reading what a server's error says, in the shapes servers use (issue #33: out of response-collector.ts, whose
 * subject is collecting one response): an error object in a stream or body, an error body's text, and the one-line
 * excerpt every message of the client quotes a server with.
 */

/** The fields of a JSON object that make it an error (a chunk, a body). */
export interface ErrorFields {
  error?: unknown;
  object?: unknown;
  message?: unknown;
}

/** True for an `{"error": …}` object or one with `object: "error"` (vLLM's stream error shape). */
export function isErrorObject(json: ErrorFields): boolean {
  return (json.error !== undefined && json.error !== null) || json.object === 'error';
}

/** What an error object says, on one line, at most 200 characters. */
export function errorText(json: ErrorFields): string {
  return excerpt(errorSaid(json) ?? JSON.stringify(json.error ?? json), 200);
}

/**
 * What an error object says, in the shapes servers use: `{"error": "…"}` (TGI), `{"error": {"message": "…"}}`
 * (OpenAI, vLLM, SGLang), or a top-level `{"message": "…"}` when there is no `error`; undefined otherwise.
 */
export function errorSaid(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { error, message } = json as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { message?: unknown }).message;
    return typeof inner === 'string' ? inner : undefined;
  }
  if (error !== undefined && error !== null) return undefined;
  return typeof message === 'string' ? message : undefined;
}

/** The first `maxChars` characters of `text` on one line. */
export function excerpt(text: string, maxChars: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > maxChars ? `${line.slice(0, maxChars)}…` : line;
}

/**
 * What an error body says: `error.message` (OpenAI's, vLLM's and SGLang's error shape), `message`, or TGI's `error`
 * string, else the body as it came. So the run's top errors read "HTTP 404: The model `x` does not exist."
 */
export function errorMessageOf(body: string): string {
  if (!body.startsWith('{')) return body;
  try {
    const said = errorSaid(JSON.parse(body));
    return said !== undefined && said.length > 0 ? said : body;
  } catch {
    // Cut at 200 characters, or not JSON at all: show it as it came.
    return body;
  }
}
