import type { RequestRecord } from './record.js';

/** One distinct error message and how many requests ended with it. */
export interface ErrorCount {
  kind: string;
  message: string;
  count: number;
}

/**
 * A message with its numbers as `#`: the shape that repeated errors share when only a count in them differs
 * (issue #34: 13 context-length 400s, each naming its own token count, were 13 rows). A group whose messages differ
 * shows its shape.
 */
export function errorShape(message: string): string {
  return message.replace(/\d+(?:\.\d+)?/g, '#');
}

/** Distinct messages kept; past it, further new messages are counted together (one bad server can vary endlessly). */
const MAX_DISTINCT = 1_000;

/**
 * Every request of a run by outcome, warmup included, and its errors by distinct message (their shape, errorShape): so a run that fails can
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
    const key = `${kind}\u0000${errorShape(message)}`;
    const seen = this.#byMessage.get(key);
    if (seen !== undefined) {
      seen.count += 1;
      if (seen.message !== message) seen.message = errorShape(message);
    }
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
