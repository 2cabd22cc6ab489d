import { DatasetError, type DatasetLocation } from '../errors/index.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { counted } from '../util/plural.js';
import { MAX_WAIT_SEC } from './size-bounds.js';
import { CSV_TRACE_BLOCK_SIZE, CSV_TRACE_FORMATS, csvColumnOrder, csvFields, type CsvTraceCounts, type CsvTraceFormat, type CsvTraceReadOptions, type CsvTraceRow } from './trace-csv.js';
import type { Conversation } from './types.js';
import type { WallClock } from './wall-clock.js';

/** A CSV trace's kept requests as columns, in file order: what `trace stats` reads. */
export interface CsvTraceColumns {
  format: CsvTraceFormat;
  /** Seconds on the trace's own clock. */
  atSec: Float64Array;
  inputLength: Uint32Array;
  /** As the trace says (0 for a failed request kept with failed=keep). */
  outputLength: Uint32Array;
  /** 1-based line of each row. */
  line: Uint32Array;
  counts: CsvTraceCounts;
}

/** Float64/Uint32 columns that double as they fill. */
class Columns {
  atSec = new Float64Array(1024);
  input = new Uint32Array(1024);
  output = new Uint32Array(1024);
  line = new Uint32Array(1024);
  length = 0;

  push(atSec: number, input: number, output: number, line: number): void {
    if (this.length === this.atSec.length) {
      const grow = <T extends Float64Array | Uint32Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.atSec = grow(this.atSec, (n) => new Float64Array(n));
      this.input = grow(this.input, (n) => new Uint32Array(n));
      this.output = grow(this.output, (n) => new Uint32Array(n));
      this.line = grow(this.line, (n) => new Uint32Array(n));
    }
    const i = this.length++;
    this.atSec[i] = atSec;
    this.input[i] = input;
    this.output[i] = output;
    this.line[i] = line;
  }
}

/**
 * Reads a CSV trace's lines (the header first, then one request a row) into columns, leaving out the rows that
 * --trace-filter and --trace-window leave out and counting them. Feed it lines in file order, then call finish().
 */
export class CsvTraceReader {
  readonly format: CsvTraceFormat;
  readonly #file: string;
  readonly #options: CsvTraceReadOptions;
  readonly #columns = new Columns();
  readonly #counts: CsvTraceCounts = { rows: 0, failedSkipped: 0, filteredOut: 0, outsideWindow: 0 };
  /** Column index of each documented column (the header's order), or undefined before the header. */
  #order: number[] | undefined;
  readonly #state: { origin?: WallClock } = {};

  constructor(file: string, format: CsvTraceFormat, options: CsvTraceReadOptions = {}) {
    this.#file = file;
    this.format = format;
    this.#options = options;
    const filter = options.filter;
    if (format === 'azure' && (filter?.models !== undefined || filter?.logTypes !== undefined)) {
      throw new DatasetError({ file }, `--trace-filter: model and log apply to BurstGPT traces, and this is an Azure trace (columns ${CSV_TRACE_FORMATS.azure.columns.join(',')}); only failed= applies`);
    }
  }

  /** One line of the file (`line` 1-based). The first is the header, or a data row in the documented column order. */
  add(text: string, line: number): void {
    const fields = csvFields(text);
    const spec = CSV_TRACE_FORMATS[this.format];
    if (this.#order === undefined) {
      const order = csvColumnOrder(this.format, fields);
      this.#order = order ?? spec.columns.map((_, i) => i);
      if (order !== undefined) return;
    }
    const at: DatasetLocation = { file: this.#file, line };
    if (fields.length !== spec.columns.length) {
      throw new DatasetError(at, `expected ${spec.columns.length} comma-separated fields (${spec.columns.join(',')}), got ${fields.length}`);
    }
    this.#counts.rows += 1;
    const row = spec.read(this.#order.map((i) => fields[i]!), at, this.#state);
    if (this.#keeps(row)) this.#columns.push(row.atSec, row.inputLength, row.outputLength, line);
  }

  #keeps(row: CsvTraceRow): boolean {
    const filter = this.#options.filter ?? { failed: 'skip' };
    const failed = row.outputLength === 0;
    if (failed && filter.failed === 'skip') return (this.#counts.failedSkipped += 1), false;
    const matches =
      (filter.failed !== 'only' || failed) &&
      (filter.models === undefined || filter.models.includes((row.model ?? '').toLowerCase())) &&
      (filter.logTypes === undefined || filter.logTypes.includes((row.logType ?? '').toLowerCase()));
    if (!matches) return (this.#counts.filteredOut += 1), false;
    const window = this.#options.window;
    if (window !== undefined && (row.atSec < window.startSec || (window.endSec !== undefined && row.atSec >= window.endSec))) {
      return (this.#counts.outsideWindow += 1), false;
    }
    return true;
  }

  /** What was read and left out. */
  get counts(): CsvTraceCounts {
    return { ...this.#counts };
  }

  /** The kept requests as columns; a DatasetError when none is left. */
  columns(): CsvTraceColumns {
    const c = this.#columns;
    if (c.length === 0) throw new DatasetError({ file: this.#file }, `no request to replay: ${describeCsvCounts(this.#counts, this.#options.window !== undefined)}`);
    return { format: this.format, atSec: c.atSec.subarray(0, c.length), inputLength: c.input.subarray(0, c.length), outputLength: c.output.subarray(0, c.length), line: c.line.subarray(0, c.length), counts: this.counts };
  }

  /**
   * The kept requests as Conversations, one a request (a self-contained session of one turn), in time order, with
   * times rebased to the window's start (or the first request). Each prompt is made of blocks of its own (fresh hash
   * ids): the trace says nothing of shared prefixes, so none is made up.
   */
  finish(): Conversation[] {
    const cols = this.columns();
    const n = cols.atSec.length;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => cols.atSec[a]! - cols.atSec[b]! || a - b);
    const t0 = this.#options.window?.startSec ?? cols.atSec[order[0]!]!;
    const blockSize = this.#options.blockSize ?? CSV_TRACE_BLOCK_SIZE;
    let nextId = 0;
    const out: Conversation[] = [];
    for (const i of order) {
      const waitSec = cols.atSec[i]! - t0;
      if (waitSec > MAX_WAIT_SEC) {
        throw new DatasetError({ file: this.#file, line: cols.line[i]! }, `a request ${Math.round(waitSec)} s into the replay is past the bound of a year (${MAX_WAIT_SEC} s)`);
      }
      const inputLength = Math.max(1, cols.inputLength[i]!);
      const blocks = Math.ceil(inputLength / blockSize);
      const hashIds = Array.from({ length: blocks }, () => nextId++);
      const messages: ChatMessage[] = [{ role: 'user', content: '' }];
      const turn = { atMs: waitSec * 1000, inputLength, outputLength: Math.max(1, cols.outputLength[i]!), hashIds };
      out.push({ id: `row-${cols.line[i]!}`, messages, trace: { format: this.format, blockSize, context: 'self-contained', turns: [turn] } });
    }
    return out;
  }
}

/** The counts in words: `1,204 rows; 3 failed requests skipped (zero output tokens); 5 filtered out`. */
export function describeCsvCounts(counts: CsvTraceCounts, windowed = false): string {
  const shown = (n: number): string => n.toLocaleString('en-US');
  const parts = [counted(counts.rows, 'row', 'rows', shown(counts.rows))];
  if (counts.failedSkipped > 0) parts.push(`${counted(counts.failedSkipped, 'failed request', 'failed requests', shown(counts.failedSkipped))} skipped (zero output tokens; failed=keep replays them)`);
  if (counts.filteredOut > 0) parts.push(`${shown(counts.filteredOut)} left out by --trace-filter`);
  if (windowed || counts.outsideWindow > 0) parts.push(`${shown(counts.outsideWindow)} outside --trace-window`);
  return parts.join('; ');
}
