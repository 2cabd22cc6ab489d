import type { RequestRecord } from './record.js';

/** One distinct error message and how many requests ended with it. */
export interface ErrorCount {
  kind: string;
  message: string;
  count: number;
}

/** Distinct messages kept; past it, further new messages are counted together (one bad server can vary endlessly). */
const MAX_DISTINCT = 1_000;

/**
 * Every request of a run by outcome, warmup included, and its errors by distinct message: so a run that fails can
 * say why (the most frequent messages) and a run in which nothing succeeded is known as such.
 */
export class ErrorTally {
  /** Requests that succeeded / failed, warmup included. */
  ok = 0;
  failed = 0;
  readonly #byMessage = new Map<string, ErrorCount>();
  #otherMessages = 0;

  add(record: RequestRecord): void {
    if (record.status === 'ok') {
      this.ok += 1;
      return;
    }
    this.failed += 1;
    const kind = record.error_kind ?? 'other';
    const message = record.error ?? '';
    const key = `${kind}\u0000${message}`;
    const seen = this.#byMessage.get(key);
    if (seen !== undefined) seen.count += 1;
    else if (this.#byMessage.size < MAX_DISTINCT) this.#byMessage.set(key, { kind, message, count: 1 });
    else this.#otherMessages += 1;
  }

  /** The `n` most frequent messages, most frequent first (ties in first-seen order). */
  top(n: number): ErrorCount[] {
    const sorted = [...this.#byMessage.values()].sort((a, b) => b.count - a.count).slice(0, n);
    return sorted.map((e) => ({ ...e }));
  }

  /** Failures whose message was not kept (past the distinct-message cap). */
  get untallied(): number {
    return this.#otherMessages;
  }
}
