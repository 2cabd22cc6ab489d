import type { RequestRecord } from '../metrics/record.js';
import { percentile } from '../metrics/stats.js';

/** Options of ProgressLine. */
export interface ProgressLineOptions {
  /** Requests expected in all (shown as done/total), when known. */
  total?: number;
  /** Minimum time between redraws (milliseconds). Default 500. */
  intervalMs?: number;
}

/** TTFT p50 is over the most recent records only, so the line shows the present rather than the whole run. */
const TTFT_WINDOW = 256;
const CLEAR_LINE = '\r\x1b[2K';

/**
 * The live progress line on a TTY: "requests 120/200 | 14.2 req/s | TTFT p50 48.1 ms | errors 2", redrawn in place at
 * most every intervalMs. The caller creates it only when the stream is a TTY. Its timer is unref'd so it never keeps
 * the process alive. Reads the clock (for req/s): it is a live view, not a result.
 */
export class ProgressLine {
  readonly #stream: NodeJS.WritableStream;
  readonly #total: number | undefined;
  readonly #startMs = performance.now();
  readonly #ttftRing = new Float64Array(TTFT_WINDOW);
  #ttftCount = 0;
  #done = 0;
  #errors = 0;
  #dirty = false;
  #timer: NodeJS.Timeout | null;

  constructor(stream: NodeJS.WriteStream, options: ProgressLineOptions = {}) {
    this.#stream = stream;
    this.#total = options.total;
    this.#timer = setInterval(() => this.#draw(), options.intervalMs ?? 500);
    this.#timer.unref();
  }

  /** Counts a finished request; the next tick redraws. Warmup requests count too: they are progress. */
  onRecord(record: RequestRecord): void {
    this.#done++;
    if (record.status === 'error') this.#errors++;
    else if (record.ttft_ms !== null) this.#ttftRing[this.#ttftCount++ % TTFT_WINDOW] = record.ttft_ms;
    this.#dirty = true;
  }

  /** The text of the line as it would be drawn now (no control characters). */
  render(): string {
    const elapsedSec = (performance.now() - this.#startMs) / 1000;
    const rate = elapsedSec > 0 ? this.#done / elapsedSec : 0;
    const n = Math.min(this.#ttftCount, TTFT_WINDOW);
    const ttft = n > 0 ? `${percentile(this.#ttftRing.slice(0, n).sort(), 50).toFixed(1)} ms` : '-';
    const done = this.#total === undefined ? String(this.#done) : `${this.#done}/${this.#total}`;
    return `requests ${done} | ${rate.toFixed(1)} req/s | TTFT p50 ${ttft} | errors ${this.#errors}`;
  }

  /** Stops redrawing and clears the line. Safe to call twice. */
  stop(): void {
    if (this.#timer === null) return;
    clearInterval(this.#timer);
    this.#timer = null;
    this.#stream.write(CLEAR_LINE);
  }

  #draw(): void {
    if (!this.#dirty || this.#timer === null) return;
    this.#dirty = false;
    this.#stream.write(`${CLEAR_LINE}${this.render()}`);
  }
}
