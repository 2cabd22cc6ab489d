import { DatasetError, shownValue, type DatasetLocation } from '../../errors/index.js';
import { messageText } from '../../tokenizer/index.js';
import { formatCount, type SizeBounds } from '../size-bounds.js';
import { describeShareGptReport, ShareGptConverter, type ShareGptReport } from '../sharegpt.js';
import type { Conversation } from '../types.js';
import { UniqueIds, validateConversation } from '../validate.js';
import type { Layout } from './layout.js';

/** Where a row is: its file, its 0-based row, and (Parquet, Arrow) its row group or record batch; or its line (JSONL). */
export type RowPlace = Pick<DatasetLocation, 'file' | 'row' | 'rowGroup' | 'line'>;

/** What the rows made: the conversations, and for a ShareGPT dialog column what the conversion kept and dropped. */
export interface RowsLoaded {
  conversations: Conversation[];
  sharegpt?: ShareGptReport;
}

/**
 * A table cell as plain data: null fields of a struct dropped (a Parquet or Arrow struct has every field of its type,
 * null where a row has none), 64-bit integers as numbers when they fit (else as text).
 */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (field !== null && field !== undefined) out[key] = plain(field);
  return out;
}

/**
 * Turns a Hugging Face dataset's rows into conversations through a Layout: each row one conversation, checked as the
 * reference format is (validate.ts) or, for a ShareGPT dialog column, converted as ShareGPT files are (sharegpt.ts).
 * Keeps the size bounds of a loaded dataset. Errors name the file, the row and the column.
 */
export class HfRowSink {
  readonly #layout: Layout;
  readonly #bounds: Readonly<SizeBounds>;
  readonly #ids = new UniqueIds();
  readonly #out: Conversation[] = [];
  #sharegpt: ShareGptConverter | undefined;
  #rows = 0;
  #chars = 0;

  readonly #imageDir: string;

  /** `imageDir`: where a ShareGPT dialog's LLaVA-style image files are read from (the dataset's folder). */
  constructor(layout: Layout, bounds: Readonly<SizeBounds>, imageDir: string) {
    this.#layout = layout;
    this.#bounds = bounds;
    this.#imageDir = imageDir;
  }

  get rows(): number {
    return this.#rows;
  }

  /** One row (an object by column name; a missing column reads as absent). */
  add(row: Record<string, unknown>, place: RowPlace): void {
    const index = this.#rows++;
    if (index >= this.#bounds.loadedConversations) throw new DatasetError(place, `more than ${formatCount(this.#bounds.loadedConversations)} conversations (the bound of a loaded dataset)`);
    const id = this.#id(row, place, index);
    const text = this.#text(row, this.#layout.system, place, true);
    const system = text === '' ? undefined : text;
    if (this.#layout.kind === 'pair') return this.#addConversation(validateConversation(this.#pair(row, id, system, place), place), place);
    const cell = plain(row[this.#layout.messages]);
    const at = { ...place, field: this.#layout.messages };
    if (!Array.isArray(cell)) throw new DatasetError(at, `expected a list of {"role", "content"} (or ShareGPT {"from", "value"}) objects, got ${shownValue(cell)}`);
    if (index === 0 && isShareGptTurn(cell[0])) this.#sharegpt = new ShareGptConverter({ imageDir: this.#imageDir, source: place.file });
    if (this.#sharegpt !== undefined) {
      this.#count(cell.reduce<number>((n, t) => n + (typeof (t as { value?: unknown })?.value === 'string' ? (t as { value: string }).value.length : 0), 0), place);
      const turns = system !== undefined && !cell.some((t) => (t as { from?: unknown })?.from === 'system') ? [{ from: 'system', value: system }, ...cell] : cell;
      return this.#sharegpt.add({ id, conversations: turns }, index);
    }
    const messages = cell.map((m, i) => openAiMessage(m, { ...at, messageIndex: i }));
    if (system !== undefined && messages[0]?.role !== 'system') messages.unshift({ role: 'system', content: system });
    this.#addConversation(validateConversation({ id, messages }, at), at);
  }

  /** The conversations of every row added, in row order (ShareGPT: as its converter keeps them). */
  finish(warn: (message: string) => void, source: string): RowsLoaded {
    if (this.#rows === 0) throw new DatasetError({ file: source }, 'the dataset has no rows');
    if (this.#sharegpt === undefined) return { conversations: this.#out };
    const { conversations, report } = this.#sharegpt.finish();
    if (Object.values(report.dropped).some((n) => n > 0)) warn(`${source}: ShareGPT: ${describeShareGptReport(report)}`);
    if (conversations.length === 0) throw new DatasetError({ file: source }, `no usable ShareGPT conversations: ${describeShareGptReport(report)}`);
    conversations.forEach((c, i) => this.#checkMessages(c, { file: source, conversationIndex: i, conversationId: c.id }));
    return { conversations, sharegpt: report };
  }

  #pair(row: Record<string, unknown>, id: string, system: string | undefined, place: RowPlace): unknown {
    const layout = this.#layout as Extract<Layout, { kind: 'pair' }>;
    let prompt = this.#text(row, layout.prompt, place, false)!;
    const input = this.#text(row, layout.input, place, true);
    if (input !== undefined && input.trim() !== '') prompt = `${prompt}\n\n${input}`;
    const response = this.#text(row, layout.response, place, false);
    const messages = [
      ...(system !== undefined ? [{ role: 'system', content: system }] : []),
      { role: 'user', content: prompt },
      ...(response !== undefined ? [{ role: 'assistant', content: response }] : []),
    ];
    return { id, messages };
  }

  #addConversation(conversation: Conversation, at: DatasetLocation): void {
    this.#ids.check(conversation, at);
    this.#count(conversation.messages.reduce((n, m) => n + messageText(m.content).length, 0), at);
    this.#checkMessages(conversation, at);
    this.#out.push(conversation);
  }

  /** A text cell: a string; null or absent only where `optional` (then undefined). */
  #text(row: Record<string, unknown>, column: string | undefined, place: RowPlace, optional: boolean): string | undefined {
    if (column === undefined) return undefined;
    const value = row[column];
    if (typeof value === 'string') return value;
    if (optional && (value === null || value === undefined)) return undefined;
    throw new DatasetError({ ...place, field: column }, `expected text, got ${shownValue(plain(value))}`);
  }

  #id(row: Record<string, unknown>, place: RowPlace, index: number): string {
    const column = this.#layout.id;
    if (column === undefined) return `row-${index}`;
    const value = plain(row[column]);
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    throw new DatasetError({ ...place, field: column }, `expected an id (text or a number), got ${shownValue(value)}`);
  }

  #count(chars: number, at: DatasetLocation): void {
    this.#chars += chars;
    if (this.#chars > this.#bounds.totalChars) throw new DatasetError(at, `the dataset holds more than ${formatCount(this.#bounds.totalChars)} characters (the bound of a loaded dataset)`);
  }

  #checkMessages(conversation: Conversation, at: DatasetLocation): void {
    const max = this.#bounds.messageChars;
    const messageIndex = conversation.messages.findIndex((m) => messageText(m.content).length > max);
    if (messageIndex === -1) return;
    const length = messageText(conversation.messages[messageIndex]!.content).length;
    throw new DatasetError({ ...at, messageIndex }, `"content" has ${formatCount(length)} characters, over the bound of ${formatCount(max)} per message`);
  }
}

/** True when a dialog's first element is a ShareGPT turn `{from, value}`. */
function isShareGptTurn(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'from' in value && !('role' in value);
}

/** One OpenAI-style message of a dialog cell, with only the fields chatload reads (a struct's other fields dropped). */
function openAiMessage(value: unknown, at: DatasetLocation): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DatasetError(at, `expected a message object {"role", "content"}, got ${shownValue(value)}`);
  const m = value as Record<string, unknown>;
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  for (const key of ['tool_calls', 'tool_call_id'] as const) if (m[key] !== undefined) out[key] = m[key];
  return out;
}
