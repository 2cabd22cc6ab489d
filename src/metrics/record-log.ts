import { ERROR_KINDS } from './error-kinds.js';
import { float64FromBase64, float64ToBase64, Float64Column } from './float64-column.js';
import type { SummaryInput } from './summary-types.js';

// Field offsets within a row (row-major: one Float64Array, ROW_STRIDE values a record). Null is stored as NaN.
const SENT = 0;
const DONE = 1;
const TTFT = 2;
const TPOT = 3;
const E2EL = 4;
const INPUT = 5;
const OUTPUT = 6;
const CACHED = 7;
const EXPECTED = 8;
const LAG = 9;
const QUEUE = 10;
const TTFT_SCHEDULED = 11;
const E2EL_SCHEDULED = 12;
const TTFT_CONTENT = 13;
/** Gaps pooled up to and including this row (only meaningful while gaps are kept). */
const GAP_END = 14;
/**
 * Status, token sources, error kind and turn, packed (the row stays 16 values, a power of two): bit 0 error, bit 1
 * input from server, bit 2 output from server, bits 3-7 kind index + 1, then the turn times 256 (exact in a double).
 */
const CODE = 15;
const TURN_UNIT = 256;
const ROW_STRIDE = 16;

const EMPTY = new Float64Array(0);
const orNaN = (x: number | null): number => x ?? Number.NaN;
const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** A RecordLog as toJSON() writes it. */
export interface SerializedRecordLog {
  rows: number;
  /** The rows (ROW_STRIDE float64 values each), base64. */
  data: string;
  /** The pooled inter-token gaps, base64; null once they passed the gap limit. */
  gaps: string | null;
}

/**
 * What a summary needs of each non-warmup record, kept compactly: 128 bytes a record in one Float64Array, plus the
 * inter-token gaps of completed records (8 bytes each) pooled up to `gapLimit` of them (then dropped: past it the ITL
 * statistics come from a histogram anyway). It lets a RunAggregate summarize any subset of its records exactly at the
 * end (the whole run, each turn, each warmup-percentage cut) without holding the records (~1.2 KB each as objects).
 */
export class RecordLog {
  readonly #gapLimit: number;
  #data = new Float64Column();
  #gaps: Float64Column | null = new Float64Column();
  #rows = 0;

  constructor(gapLimit: number) {
    this.#gapLimit = gapLimit;
  }

  /** Records held. */
  get rows(): number {
    return this.#rows;
  }

  /** Whether every gap is still held (false once there were more than the gap limit). */
  get gapsKept(): boolean {
    return this.#gaps !== null;
  }

  /** Appends one non-warmup record. */
  add(r: SummaryInput): void {
    const ok = r.status === 'ok';
    if (ok && this.#gaps !== null) {
      if (this.#gaps.length + r.itl_ms.length > this.#gapLimit) this.#gaps = null;
      else for (let i = 0; i < r.itl_ms.length; i++) this.#gaps.push(r.itl_ms[i]!);
    }
    const kind = r.error_kind === null ? 0 : ERROR_KINDS.indexOf(r.error_kind) + 1;
    const code = (ok ? 0 : 1) | (r.input_tokens_source === 'server' ? 2 : 0) | (r.output_tokens_source === 'server' ? 4 : 0) | (kind << 3);
    const d = this.#data;
    d.push(r.sent_at_ms);
    d.push(r.done_at_ms);
    d.push(orNaN(r.ttft_ms));
    d.push(orNaN(r.tpot_ms));
    d.push(r.e2el_ms);
    d.push(r.input_num_tokens);
    d.push(r.output_num_tokens);
    d.push(orNaN(r.cached_tokens));
    d.push(r.expected_cached_tokens);
    d.push(orNaN(r.schedule_lag_ms));
    d.push(r.queue_ms);
    d.push(orNaN(r.ttft_from_scheduled_ms));
    d.push(orNaN(r.e2el_from_scheduled_ms));
    d.push(orNaN(r.ttft_content_ms));
    d.push(this.#gaps?.length ?? 0);
    d.push(code + r.turn * TURN_UNIT);
    this.#rows++;
  }

  /** Appends other's rows after these (other is unchanged); gaps stay kept only while both logs together are under the limit. */
  append(other: RecordLog): void {
    const offset = this.#gaps?.length ?? 0;
    const start = this.#rows * ROW_STRIDE;
    this.#data.pushAll(other.#data.toArray());
    this.#rows += other.#rows;
    if (this.#gaps === null || other.#gaps === null || offset + other.#gaps.length > this.#gapLimit) {
      this.#gaps = null;
      return;
    }
    this.#gaps.pushAll(other.#gaps.toArray());
    const d = this.#data;
    for (let i = start + GAP_END; i < d.length; i += ROW_STRIDE) d.set(i, d.at(i) + offset);
  }

  /** The send time of row i, ms. */
  sentAt(i: number): number {
    return this.#data.at(i * ROW_STRIDE + SENT);
  }

  /** Row i as the record fields a summary reads; `itl_ms` is a view of the pooled gaps (empty when they were dropped). */
  row(i: number): SummaryInput {
    // A row never straddles two chunks (ROW_STRIDE divides the chunk size): one view reads it.
    const d = this.#data.slice(i * ROW_STRIDE, (i + 1) * ROW_STRIDE);
    const packed = d[CODE]!;
    const code = packed % TURN_UNIT;
    const kind = (code >> 3) - 1;
    const error = (code & 1) === 1;
    let itl: Float64Array = EMPTY;
    if (!error && this.#gaps !== null) itl = this.#gaps.slice(i === 0 ? 0 : this.#data.at((i - 1) * ROW_STRIDE + GAP_END), d[GAP_END]!);
    return {
      turn: (packed - code) / TURN_UNIT,
      status: error ? 'error' : 'ok',
      error_kind: kind < 0 ? null : ERROR_KINDS[kind]!,
      sent_at_ms: d[SENT]!,
      done_at_ms: d[DONE]!,
      ttft_ms: orNull(d[TTFT]!),
      ttft_content_ms: orNull(d[TTFT_CONTENT]!),
      tpot_ms: orNull(d[TPOT]!),
      itl_ms: itl,
      e2el_ms: d[E2EL]!,
      input_num_tokens: d[INPUT]!,
      input_tokens_source: (code & 2) === 2 ? 'server' : 'local',
      output_num_tokens: d[OUTPUT]!,
      output_tokens_source: (code & 4) === 4 ? 'server' : 'local',
      cached_tokens: orNull(d[CACHED]!),
      expected_cached_tokens: d[EXPECTED]!,
      schedule_lag_ms: orNull(d[LAG]!),
      queue_ms: d[QUEUE]!,
      ttft_from_scheduled_ms: orNull(d[TTFT_SCHEDULED]!),
      e2el_from_scheduled_ms: orNull(d[E2EL_SCHEDULED]!),
    };
  }

  /** The log as plain data (fromJSON() restores it). */
  toJSON(): SerializedRecordLog {
    return { rows: this.#rows, data: float64ToBase64(this.#data.toArray()), gaps: this.#gaps === null ? null : float64ToBase64(this.#gaps.toArray()) };
  }

  /** Restores toJSON()'s output. Throws a TypeError when it does not have that shape. */
  static fromJSON(value: SerializedRecordLog, gapLimit: number): RecordLog {
    const out = new RecordLog(gapLimit);
    out.#data = Float64Column.of(float64FromBase64(value.data));
    if (out.#data.length !== value.rows * ROW_STRIDE) throw new TypeError(`serialized RecordLog: ${value.rows} rows do not match its data`);
    out.#rows = value.rows;
    out.#gaps = value.gaps === null ? null : Float64Column.of(float64FromBase64(value.gaps));
    return out;
  }
}
