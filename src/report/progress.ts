import type { RequestRecord } from '../metrics/record.js';
import { LiveModel } from './live-model.js';
import { panelLines, plainLine, waitingLine } from './live-panel.js';
import { cutText } from './table-fit.js';
import { escapeControl } from '../util/control-chars.js';

/** How the live view draws: a redrawn panel (a TTY), a line every PLAIN_INTERVAL_MS (logs), or nothing. */
export type ProgressMode = 'panel' | 'plain' | 'off';

/** The panel's redraw period (ms): about 4 frames a second. */
export const PANEL_INTERVAL_MS = 250;
/** A plain progress line every this many ms. */
export const PLAIN_INTERVAL_MS = 10_000;
/** The waiting countdown appears only when the server has not answered within this (ms): a quick start shows nothing. */
const WAIT_QUIET_MS = 1_000;

/** The writable side of a terminal: `columns` when it is one (undefined otherwise). */
export interface LiveStream {
  write(chunk: string): boolean;
  columns?: number;
}

/** What a run starts with: the totals its progress counts against. */
export interface LiveRunInfo {
  totalRequests?: number;
  durationMs?: number;
  rampUpMs?: number;
}

/**
 * The live view of a run (issue 18): a LiveModel fed by the run's events, drawn on its own unref'd timer. In 'panel'
 * mode it redraws a few lines in place at ~4 fps; every other text (warnings, status lines) must go through print(),
 * which clears the panel, writes the text above it and draws the panel again, so nothing lands inside it. Hand-written
 * ANSI on purpose: four escape sequences (cursor up and down, carriage return, erase line) do the job that a TUI library
 * would do with a dependency tree and start-up cost (issue 17 keeps `run` start-up small).
 */
export class LiveView {
  readonly #stream: LiveStream;
  readonly #mode: ProgressMode;
  readonly #now: () => number;
  #model: LiveModel | undefined;
  #heading: string | undefined;
  #waiting: { url: string; deadlineMs: number; sinceMs: number; lastCause?: string } | undefined;
  /** Lengths of the lines on screen now (panel mode), to know how many rows to clear at the current width. */
  #drawn: number[] = [];
  #timer: NodeJS.Timeout | null = null;
  #lastPlainMs = 0;
  #lastTickMs = 0;
  #worstDelayMs = 0;
  #healthFromMs = 0;
  #cpu = process.cpuUsage();

  constructor(stream: LiveStream, mode: ProgressMode, options: { now?: () => number } = {}) {
    this.#stream = stream;
    this.#mode = mode;
    this.#now = options.now ?? (() => performance.now());
  }

  /** `sweep`: the heading over the panel, e.g. "point 2/5: concurrency 8". Kept for the next run's model too. */
  setHeading(heading: string | undefined): void {
    this.#heading = heading;
    if (this.#model !== undefined) this.#model.heading = heading;
  }

  /** Waiting for the server (at most timeoutMs): a countdown line once it has taken a second. */
  waitingForServer(url: string, timeoutMs: number): void {
    const now = this.#now();
    this.#waiting = { url, deadlineMs: now + timeoutMs, sinceMs: now };
    this.#lastPlainMs = now;
    this.#ensureTimer();
  }

  /** A readiness attempt failed and will be retried: the waiting line says its cause (a server's text: escaped). */
  serverNotReady(cause: string): void {
    if (this.#waiting !== undefined) this.#waiting.lastCause = escapeControl(cause);
  }

  /** The run starts: a fresh model against these totals. */
  start(info: LiveRunInfo): void {
    this.#clear();
    this.#waiting = undefined;
    const now = this.#now();
    // 'off' (-q) never draws: no model to feed on every send and record (issue #33, part 5: CPU per request).
    this.#model = this.#mode === 'off' ? undefined : new LiveModel(now, { ...info, heading: this.#heading });
    this.#lastPlainMs = now;
    this.#healthFromMs = now;
    this.#lastTickMs = now;
    this.#cpu = process.cpuUsage();
    this.#ensureTimer();
  }

  onSend(): void {
    this.#model?.onSend();
  }

  onQueued(delta: 1 | -1): void {
    this.#model?.onQueued(delta);
  }

  onPhase(phase: 'warmup' | 'benchmark' | 'stopping'): void {
    this.#model?.onPhase(phase, this.#now());
  }

  onRecord(record: RequestRecord): void {
    this.#model?.onRecord(record, this.#now());
  }

  /** The panel's lines as they would be drawn now at `columns` (no control characters); [] before start(). */
  lines(columns = 80): string[] {
    const now = this.#now();
    if (this.#waiting !== undefined) return [cutText(waitingLine(this.#waiting.url, this.#waiting.deadlineMs - now, this.#waiting.lastCause), columns - 1)];
    return this.#model === undefined ? [] : panelLines(this.#model.snapshot(now), columns);
  }

  /** Writes text (whole lines) above the panel: the panel is cleared first and drawn again after. */
  print(text: string): void {
    this.#clear();
    this.#stream.write(text);
    if (this.#timer !== null && this.#mode === 'panel') this.#draw();
  }

  /** The run ended: the panel is cleared and the timer stopped (start() may begin another). Safe to call twice. */
  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#clear();
    this.#model = undefined;
    this.#waiting = undefined;
  }

  #ensureTimer(): void {
    if (this.#mode === 'off' || this.#timer !== null) return;
    this.#timer = setInterval(() => this.#tick(), PANEL_INTERVAL_MS);
    this.#timer.unref();
  }

  #tick(): void {
    const now = this.#now();
    // Client health as the panel sees it: how late this timer fired (event-loop delay) and the process's CPU.
    if (this.#lastTickMs > 0) this.#worstDelayMs = Math.max(this.#worstDelayMs, now - this.#lastTickMs - PANEL_INTERVAL_MS);
    this.#lastTickMs = now;
    if (this.#model !== undefined && now - this.#healthFromMs >= 1000) {
      const cpu = process.cpuUsage(this.#cpu);
      this.#model.onHealth(Math.max(0, this.#worstDelayMs), ((cpu.user + cpu.system) / 1000 / (now - this.#healthFromMs)) * 100);
      this.#cpu = process.cpuUsage();
      this.#healthFromMs = now;
      this.#worstDelayMs = 0;
    }
    // Past the readiness deadline the wait is over: the give-up line comes next, not a countdown at 0 s (seen when a
    // loaded machine ran the last attempt late).
    if (this.#waiting !== undefined && now >= this.#waiting.deadlineMs) return;
    if (this.#mode === 'panel') {
      if (this.#waiting !== undefined && now - this.#waiting.sinceMs < WAIT_QUIET_MS) return;
      this.#draw();
    } else if (now - this.#lastPlainMs >= (this.#waiting !== undefined && this.#lastPlainMs === this.#waiting.sinceMs ? WAIT_QUIET_MS : PLAIN_INTERVAL_MS)) {
      this.#lastPlainMs = now;
      const line = this.#waiting !== undefined ? waitingLine(this.#waiting.url, this.#waiting.deadlineMs - now, this.#waiting.lastCause) : this.#model === undefined ? undefined : plainLine(this.#model.snapshot(now));
      if (line !== undefined) this.#stream.write(`${line}\n`);
    }
  }

  /**
   * The terminal's width now. Node updates `columns` only when its SIGWINCH handler runs, a loop turn or more after
   * the resize, and a clear counted at the old width leaves the panel's top rows behind once the terminal has re-wrapped
   * them (seen in tmux under load). So the width is read again before each clear and draw: `_refreshSize` is
   * tty.WriteStream's own ioctl(TIOCGWINSZ) refresh, a microsecond call, present since Node 0.x; a stream without it
   * (a test's fake, a pipe) keeps its `columns`.
   */
  #columns(): number {
    const refresh = (this.#stream as { _refreshSize?: () => void })._refreshSize;
    if (typeof refresh === 'function') {
      try {
        refresh.call(this.#stream);
      } catch {
        // The terminal is gone (the size query failed): keep the last width; the write that follows fails on its own.
      }
    }
    return this.#stream.columns !== undefined && this.#stream.columns > 0 ? this.#stream.columns : 80;
  }

  /**
   * Moves to the panel's first row and blanks its rows one by one, counting rows at the current width (a resize
   * re-wraps). Erase-in-line on each row, not erase-below: tmux moves the screen into its scrollback when the screen
   * is erased from the top-left corner, where the panel sits once the text above it has scrolled away.
   */
  #clear(columns?: number): void {
    if (this.#drawn.length === 0) return;
    columns ??= this.#columns();
    const rows = this.#drawn.reduce((n, len) => n + Math.max(1, Math.ceil(len / columns)), 0);
    const up = rows > 1 ? `\x1b[${rows - 1}A` : '';
    this.#stream.write(`\r${up}${'\x1b[2K\x1b[1B'.repeat(rows - 1)}\x1b[2K${up}`);
    this.#drawn = [];
  }

  #draw(): void {
    // One width read for the frame: the clear and the new lines count at the same width.
    const columns = this.#columns();
    const lines = this.lines(columns);
    this.#clear(columns);
    if (lines.length === 0) return;
    this.#stream.write(lines.map((l) => `\x1b[2K${l}`).join('\n'));
    this.#drawn = lines.map((l) => l.length);
  }
}
