import type { Readable } from 'node:stream';
import { text as streamText } from 'node:stream/consumers';
import type { Dispatcher } from 'undici';
import { ChatloadError } from '../errors/index.js';
import { decodeContent } from './content-encoding.js';
import { excerpt } from './error-body.js';

/** A model the server lists at `GET /v1/models`. */
export interface ModelInfo {
  id: string;
  /** Context length (tokens), from vLLM/SGLang's `max_model_len`, when the server reports it. */
  maxModelLen?: number;
}

/** A server's answer as chatload read it: the status, the headers and the whole body as text (decoded). */
export interface ServerAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A response body as text can be read: decoded when the server compressed it (the raw body when it cannot be). */
export function plainBody(response: Dispatcher.ResponseData<unknown>): Readable {
  const decoded = decodeContent(response.body, headerText(response.headers['content-encoding']));
  return 'unsupported' in decoded ? response.body : decoded.body;
}

/** The whole body as UTF-8 text, decoded when compressed. */
export async function readText(response: Dispatcher.ResponseData<unknown>): Promise<string> {
  const body = plainBody(response);
  return body === response.body ? response.body.text() : streamText(body);
}

/** A header's value as one string (the first, when repeated). */
export function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** Parses an OpenAI `/v1/models` body; ChatloadError when it is not one. */
export function parseModels(text: string, where: string): ModelInfo[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ChatloadError(`${where} did not answer JSON: ${excerpt(text, 120)}`);
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new ChatloadError(`${where} answered without a "data" list: ${excerpt(text, 120)}`);
  const models: ModelInfo[] = [];
  for (const entry of data) {
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') continue;
    const model: ModelInfo = { id };
    const maxLen = (entry as { max_model_len?: unknown }).max_model_len;
    if (typeof maxLen === 'number' && Number.isFinite(maxLen)) model.maxModelLen = maxLen;
    models.push(model);
  }
  return models;
}
