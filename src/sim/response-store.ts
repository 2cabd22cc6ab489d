import type { SimMessage } from './request-parse.js';

/**
 * The Responses API's stored responses (`store: true`), for `previous_response_id`: under each response id, the whole
 * conversation up to and including that response's answer. Bounded: at most `capacity` responses, the least recently
 * stored or used dropped first; a dropped or unknown id is then answered 400 `previous_response_not_found`, as OpenAI
 * answers. Each entry is a list of references to message objects shared with the entries before it, so an entry costs
 * a pointer per message, not a copy of the text.
 */
export class ResponseStore {
  readonly #capacity: number;
  /** Insertion order is recency: a use re-inserts. */
  readonly #entries = new Map<string, readonly SimMessage[]>();

  /** @param capacity most responses kept (>= 0; 0 keeps none). */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Responses held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The history stored under `id` (marking it recently used), or undefined when unknown or dropped. */
  get(id: string): readonly SimMessage[] | undefined {
    const history = this.#entries.get(id);
    if (history === undefined) return undefined;
    this.#entries.delete(id);
    this.#entries.set(id, history);
    return history;
  }

  /** Stores `history` (which ends with the answer) under `id`, dropping the least recently used beyond capacity. */
  set(id: string, history: readonly SimMessage[]): void {
    if (this.#capacity === 0) return;
    this.#entries.delete(id);
    this.#entries.set(id, history);
    while (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** Drops every stored response. */
  clear(): void {
    this.#entries.clear();
  }
}
