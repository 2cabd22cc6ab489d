import { dirname } from 'node:path';
import { DatasetError, shownValue } from '../../errors/index.js';
import type { SizeBounds } from '../size-bounds.js';
import { resolveLayout, type HfColumns } from './layout.js';
import { HfRowSink } from './rows.js';

/** Prompt and answer columns whose presence makes a JSON row a Hugging Face row rather than a chatload conversation. */
const PAIR_COLUMNS = ['prompt', 'instruction', 'question', 'query'];

/**
 * True when a JSONL row is a Hugging Face export's row, not a chatload conversation (`{"id": "...", "messages"}`) nor
 * a ShareGPT item (`conversations` of `{from, value}`): `messages` without a text id, `conversations` of
 * `{role, content}`, or a prompt/response pair.
 */
export function isHfChatRow(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const row = value as Record<string, unknown>;
  if (Array.isArray(row.messages)) return typeof row.id !== 'string';
  if (Array.isArray(row.conversations)) {
    const first: unknown = row.conversations[0];
    return typeof first === 'object' && first !== null && 'role' in first;
  }
  return PAIR_COLUMNS.some((c) => typeof row[c] === 'string');
}

/** A JSONL row as a table row: a JSON object. */
export function jsonRow(value: unknown, file: string, line: number): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DatasetError({ file, line }, `expected one JSON object (a row) a line, got ${shownValue(value)}`);
  return value as Record<string, unknown>;
}

/** The sink of a Hugging Face JSONL export, its layout from --columns or detected from the first row's keys. */
export function jsonRowSink(first: unknown, file: string, line: number, columns: HfColumns | undefined, bounds: Readonly<SizeBounds>): HfRowSink {
  const row = jsonRow(first, file, line);
  return new HfRowSink(resolveLayout(Object.keys(row), columns ?? {}, { file, line }), bounds, dirname(file));
}
