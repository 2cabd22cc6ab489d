import { DatasetError, shownValue, type DatasetLocation } from '../errors/index.js';
import type { ChatMessage } from '../tokenizer/types.js';
import type { Conversation, TraceSession, TraceTurn } from './types.js';
import { MAX_WAIT_SEC } from './size-bounds.js';
import { counted } from '../util/plural.js';
import type { AgenticTraceFormat } from './agentic-traces/formats.js';
import type { CsvTraceFilter, CsvTraceFormat } from './trace-csv.js';

/*
 * Production traces (docs/DATASETS.md): Mooncake's JSONL (one request a line: `timestamp` ms, `input_length`,
 * `output_length`, `hash_ids`; optional `session_id` + `delay`, `messages`, `tools`) and Alibaba Bailian's
 * (`chat_id`, `parent_chat_id`, `timestamp` s, `input_length`, `output_length`, `type`, `turn`, `hash_ids`). Rows are
 * grouped into sessions (Conversations with a `trace`), in order of their first request. No prompt text is made here:
 * the engine synthesises each prompt from its hash ids when it sends it (synth/hash-blocks.ts).
 */

/** The trace formats. */
export type TraceFormat = 'mooncake' | 'bailian';

/** Default tokens per hash block: Mooncake's traces use 512, Bailian's 16. */
export const DEFAULT_TRACE_BLOCK_SIZE: Readonly<Record<TraceFormat, number>> = { mooncake: 512, bailian: 16 };

/** How a trace is read: --input-format, --trace-block-size, --trace-window, --trace-filter (CSV traces). */
export interface TraceReadOptions {
  /** Forced format; undefined: detected from the first row's fields (JSONL) or the header line (CSV). Agentic formats: ./agentic-traces/. */
  format?: TraceFormat | CsvTraceFormat | AgenticTraceFormat;
  /** Which rows of a CSV trace are replayed (--trace-filter). */
  filter?: CsvTraceFilter;
  /** Hears each row's turn as it is read, with its line (`trace synthesize` rewrites the rows from their turns). */
  onTurn?: (turn: TraceTurn, line: number) => void;
  blockSize?: number;
  /** Replay only sessions starting in [startSec, endSec) of the trace's own clock (seconds). */
  window?: { startSec: number; endSec?: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The trace format a parsed row looks like, or undefined when it is no trace row. */
export function detectTraceFormat(value: unknown): TraceFormat | undefined {
  if (!isRecord(value)) return undefined;
  if ('chat_id' in value && 'parent_chat_id' in value) return 'bailian';
  if ('hash_ids' in value && 'input_length' in value) return 'mooncake';
  // A Mooncake row with a pre-formatted prompt needs no hash ids.
  if ('output_length' in value && 'messages' in value && ('session_id' in value || 'timestamp' in value) && !('id' in value)) return 'mooncake';
  return undefined;
}

function fieldError(at: DatasetLocation, field: string, expected: string, got: unknown): DatasetError {
  return new DatasetError(at, `${field}: expected ${expected}, got ${shownValue(got)}`);
}

function nonNegativeInt(row: Record<string, unknown>, field: string, at: DatasetLocation): number {
  const v = row[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw fieldError(at, field, 'an integer >= 0', v);
  return v;
}

function nonNegativeNumber(row: Record<string, unknown>, field: string, at: DatasetLocation): number {
  const v = row[field];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw fieldError(at, field, 'a number >= 0', v);
  return v;
}

function hashIds(row: Record<string, unknown>, at: DatasetLocation): number[] {
  const v = row.hash_ids;
  if (!Array.isArray(v)) throw fieldError(at, 'hash_ids', 'a list of integers', v);
  for (const id of v) if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw fieldError(at, 'hash_ids', 'integers >= 0', id);
  return v as number[];
}

function messagesOf(row: Record<string, unknown>, at: DatasetLocation): ChatMessage[] {
  const v = row.messages;
  if (!Array.isArray(v) || v.length === 0) throw fieldError(at, 'messages', 'a non-empty list of {role, content}', v);
  return v.map((m: unknown, i) => {
    if (!isRecord(m) || typeof m.role !== 'string' || typeof m.content !== 'string') throw fieldError(at, `messages[${i}]`, 'an object {role, content} with string content', m);
    return m as unknown as ChatMessage;
  });
}

/** Checks input_length against the hash ids: the ids must cover the prompt. */
function checkCoverage(turn: TraceTurn, blockSize: number, at: DatasetLocation): void {
  if (turn.messages !== undefined) return;
  const blocks = Math.ceil(turn.inputLength / blockSize);
  if (turn.hashIds.length < blocks) {
    throw new DatasetError(
      at,
      `hash_ids: expected at least ${counted(blocks, 'id')} for input_length ${turn.inputLength} at ${blockSize} tokens a block, got ${turn.hashIds.length} (is --trace-block-size right?)`,
    );
  }
  if (turn.inputLength === 0) throw fieldError(at, 'input_length', 'an integer >= 1', 0);
}

/** Seconds as an error names them: 1.000e+297 past a trillion, else with thousands separators. */
function shownSeconds(s: number): string {
  return s >= 1e12 ? s.toExponential(3) : Math.round(s).toLocaleString('en-US');
}

/** Reads rows of one trace format into sessions. Feed it rows in file order, then call finish(). */
export class TraceReader {
  readonly format: TraceFormat;
  readonly #file: string;
  readonly #blockSize: number;
  readonly #window: TraceReadOptions['window'];
  readonly #onTurn: TraceReadOptions['onTurn'];
  /** Sessions by key, in order of their first row. */
  readonly #sessions = new Map<string, { session: TraceSession; startMs: number; line: number }>();
  /** Bailian: the session each chat_id belongs to. */
  readonly #sessionOfChat = new Map<number, string>();
  #rows = 0;

  constructor(file: string, format: TraceFormat, options: TraceReadOptions = {}) {
    this.#file = file;
    this.format = format;
    this.#blockSize = options.blockSize ?? DEFAULT_TRACE_BLOCK_SIZE[format];
    this.#window = options.window;
    this.#onTurn = options.onTurn;
  }

  get rows(): number {
    return this.#rows;
  }

  /** One parsed row from line `line`. */
  add(value: unknown, line: number): void {
    const at: DatasetLocation = { file: this.#file, line };
    if (!isRecord(value)) throw new DatasetError(at, `expected a ${this.format} trace row (a JSON object), got ${shownValue(value)}`);
    this.#rows += 1;
    const turn = this.format === 'bailian' ? this.#addBailian(value, at) : this.#addMooncake(value, line, at);
    this.#onTurn?.(turn, line);
  }

  #addMooncake(row: Record<string, unknown>, line: number, at: DatasetLocation): TraceTurn {
    const messages = row.messages === undefined ? undefined : messagesOf(row, at);
    const tools = row.tools;
    if (tools !== undefined && !Array.isArray(tools)) throw fieldError(at, 'tools', 'a list of tool definitions', tools);
    const hasIds = row.hash_ids !== undefined;
    const ids = hasIds || messages === undefined ? hashIds(row, at) : [];
    const inputLength = row.input_length === undefined && messages !== undefined ? 0 : nonNegativeInt(row, 'input_length', at);
    const turn: TraceTurn = { inputLength, outputLength: Math.max(1, nonNegativeInt(row, 'output_length', at)), hashIds: ids };
    if (messages !== undefined) turn.messages = messages;
    if (tools !== undefined) turn.tools = tools;
    checkCoverage(turn, this.#blockSize, at);
    const sessionId = row.session_id;
    if (sessionId !== undefined && typeof sessionId !== 'string' && typeof sessionId !== 'number') throw fieldError(at, 'session_id', 'a string or number', sessionId);
    const key = sessionId === undefined ? `line-${line}` : String(sessionId);
    const existing = this.#sessions.get(key);
    if (row.timestamp !== undefined) turn.atMs = nonNegativeNumber(row, 'timestamp', at);
    if (row.delay !== undefined) turn.delayMs = nonNegativeNumber(row, 'delay', at);
    if (existing === undefined) {
      if (turn.atMs === undefined) throw fieldError(at, 'timestamp', 'a number >= 0 (ms) on the first request of a session', undefined);
      delete turn.delayMs;
      // Pre-formatted prompts hold their whole context; synthesised ones build on the session's history.
      const context = messages !== undefined ? 'self-contained' : 'history';
      this.#sessions.set(key, { session: { format: 'mooncake', blockSize: this.#blockSize, context, turns: [turn] }, startMs: turn.atMs, line });
    } else {
      existing.session.turns.push(turn);
    }
    return turn;
  }

  #addBailian(row: Record<string, unknown>, at: DatasetLocation): TraceTurn {
    const chatId = nonNegativeInt(row, 'chat_id', at);
    const parent = row.parent_chat_id;
    if (typeof parent !== 'number' || !Number.isInteger(parent) || parent < -1) throw fieldError(at, 'parent_chat_id', 'an integer (-1 for a root)', parent);
    const turn: TraceTurn = {
      atMs: nonNegativeNumber(row, 'timestamp', at) * 1000,
      inputLength: nonNegativeInt(row, 'input_length', at),
      outputLength: Math.max(1, nonNegativeInt(row, 'output_length', at)),
      hashIds: hashIds(row, at),
    };
    checkCoverage(turn, this.#blockSize, at);
    // A parent outside the file (or the window) makes the row a root of its own session.
    const key = (parent >= 0 ? this.#sessionOfChat.get(parent) : undefined) ?? `chat-${chatId}`;
    this.#sessionOfChat.set(chatId, key);
    const existing = this.#sessions.get(key);
    if (existing === undefined) {
      this.#sessions.set(key, { session: { format: 'bailian', blockSize: this.#blockSize, context: 'self-contained', turns: [turn] }, startMs: turn.atMs!, line: at.line! });
    } else existing.session.turns.push(turn);
    return turn;
  }

  /**
   * The sessions as Conversations, in order of their first request, with times rebased so the replay starts at the
   * window's start (or the first request). Sessions starting outside --trace-window are left out.
   */
  finish(): Conversation[] {
    const window = this.#window;
    const startMs = window === undefined ? undefined : window.startSec * 1000;
    const endMs = window?.endSec === undefined ? Infinity : window.endSec * 1000;
    const kept = [...this.#sessions.entries()].filter(([, s]) => (startMs === undefined || s.startMs >= startMs) && s.startMs < endMs);
    if (kept.length === 0) {
      const why = window === undefined ? 'the trace has no requests' : `no session starts inside --trace-window ${window.startSec}:${window.endSec ?? ''}`;
      throw new DatasetError({ file: this.#file }, why);
    }
    kept.sort((a, b) => a[1].startMs - b[1].startMs || a[1].line - b[1].line);
    const t0 = startMs ?? kept[0]![1].startMs;
    // A replay waits out the trace's own clock: past MAX_WAIT_SEC a time is a slip, not a schedule.
    for (const [key, { session, line }] of kept) {
      for (const turn of session.turns) {
        const wait = Math.max((turn.atMs ?? 0) - t0, turn.delayMs ?? 0);
        if (wait > MAX_WAIT_SEC * 1000) {
          throw new DatasetError({ file: this.#file, line }, `session ${JSON.stringify(key)}: a request ${shownSeconds(wait / 1000)} s into the replay is past the bound of a year (${shownSeconds(MAX_WAIT_SEC)} s); expected timestamps in ${session.format === 'mooncake' ? 'ms' : 's'} from the trace's start`);
        }
      }
    }
    return kept.map(([key, { session }]) => {
      for (const turn of session.turns) if (turn.atMs !== undefined) turn.atMs -= t0;
      // Placeholders: one empty user message a turn, so counts of turns and messages stay true; the text is made at send time.
      const messages: ChatMessage[] = session.turns.map(() => ({ role: 'user', content: '' }));
      return { id: key, messages, trace: session };
    });
  }
}
