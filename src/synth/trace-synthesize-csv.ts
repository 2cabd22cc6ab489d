import { CSV_TRACE_FORMATS, csvColumnOrder, csvFields, type CsvTraceFormat } from '../conversation/trace-csv.js';
import { formatWallClock, parseWallClock, type WallClock, type WallClockStyle } from '../conversation/wall-clock.js';
import { DatasetError } from '../errors/index.js';
import { letLoopGo } from '../util/loop-turns.js';
import { utf8Lines } from '../util/utf8-text.js';
import { scaleLength, synthesisRng, type TraceSynthesisOptions, type TraceSynthesisSummary } from './trace-synthesis.js';

/*
 * Synthesis of a CSV trace (Azure, BurstGPT), streamed row by row: each row's time from the first row divided by
 * --rate-scale (Azure's wall clock written back exactly, in the trace's own style), its lengths scaled, every other
 * field as it was. The trace has no prefix structure to keep or change.
 */

/** Rows between two lets of the event loop. */
const ROWS_PER_SLICE = 500;

/** A field as CSV writes it: quoted when it holds a comma, a quote or a line break. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Seconds as BurstGPT writes them: a whole number as it is, else to the microsecond. */
function seconds(s: number): string {
  return Number.isInteger(s) ? String(s) : String(Number(s.toFixed(6)));
}

/** Rewrites one row's times and lengths in place. */
class RowScaler {
  readonly #format: CsvTraceFormat;
  readonly #options: TraceSynthesisOptions;
  readonly #rng;
  #origin: { clock: WallClock; style: WallClockStyle } | undefined;
  #firstSec: number | undefined;

  constructor(format: CsvTraceFormat, options: TraceSynthesisOptions) {
    this.#format = format;
    this.#options = options;
    this.#rng = synthesisRng(options.seed);
  }

  /** `fields` in the documented column order (already checked by the format's reader). */
  scale(fields: string[], atSec: number): void {
    const { rateScale, islScale, oslScale } = this.#options;
    if (this.#format === 'azure') {
      const parsed = parseWallClock(fields[0]!)!;
      this.#origin ??= { clock: parsed, style: parsed.style };
      // atSec is exact nanoseconds / 1e9: rounding the product back gives those nanoseconds.
      fields[0] = formatWallClock(this.#origin.clock, Math.round(atSec * 1e9) / rateScale, this.#origin.style);
      fields[1] = String(scaleLength(Number(fields[1]), islScale, this.#rng));
      fields[2] = String(scaleLength(Number(fields[2]), oslScale, this.#rng));
      return;
    }
    this.#firstSec ??= atSec;
    fields[0] = seconds(this.#firstSec + (atSec - this.#firstSec) / rateScale);
    const input = scaleLength(Number(fields[2]), islScale, this.#rng);
    const output = scaleLength(Number(fields[3]), oslScale, this.#rng);
    fields[2] = String(input);
    fields[3] = String(output);
    fields[4] = String(input + output);
  }
}

/** Writes the synthesis of the CSV trace `file` through `write`, line by line. */
export async function synthesizeCsvTrace(
  file: string,
  format: CsvTraceFormat,
  options: TraceSynthesisOptions,
  write: (text: string) => void,
  utf8: { allowInvalidUtf8: boolean },
): Promise<TraceSynthesisSummary> {
  if (options.prefixShare !== undefined) {
    throw new DatasetError({ file }, `--prefix-share: this ${format === 'azure' ? 'Azure' : 'BurstGPT'} trace carries no prefix structure (no hash ids), so there is no share to keep or set: its replay's prompts share nothing; drop --prefix-share`);
  }
  const spec = CSV_TRACE_FORMATS[format];
  const scaler = new RowScaler(format, options);
  const state: { origin?: WallClock } = {};
  let order: number[] | undefined;
  let requests = 0;
  let line = 0;
  for await (const text of utf8Lines(file, { ...utf8, maxLineChars: 64 * 1024 })) {
    line += 1;
    if (text.trim() === '') continue;
    const fields = csvFields(text);
    if (order === undefined) {
      order = csvColumnOrder(format, fields);
      if (order !== undefined) {
        write(`${text}\n`);
        continue;
      }
      order = spec.columns.map((_, i) => i);
    }
    if (fields.length !== spec.columns.length) throw new DatasetError({ file, line }, `expected ${spec.columns.length} comma-separated fields (${spec.columns.join(',')}), got ${fields.length}`);
    const documented = order.map((i) => fields[i]!);
    const row = spec.read(documented, { file, line }, state);
    scaler.scale(documented, row.atSec);
    order.forEach((i, k) => (fields[i] = documented[k]!));
    write(`${fields.map(csvField).join(',')}\n`);
    requests += 1;
    if (line % ROWS_PER_SLICE === 0) await letLoopGo();
  }
  if (requests === 0) throw new DatasetError({ file }, 'the trace has no rows');
  return { format, requests };
}
