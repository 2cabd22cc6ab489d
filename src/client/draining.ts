import type { Exchange } from './exchange.js';

/**
 * The keep-alive pool's responses that are still being drained after their reader finished (`[DONE]`), oldest first,
 * and the requests in flight through the pool. A drained body holds its connection until it ends (at most
 * AFTER_DONE_GRACE_MS): a request that would find every connection taken cuts the oldest drained one instead of
 * waiting behind it, because that wait would be booked as the server's TTFT (issue #35: a server that never ends
 * its body after [DONE] made each next request wait 2 s).
 */
export class DrainingResponses {
  readonly #connections: number;
  readonly #draining = new Set<Exchange>();
  #inFlight = 0;

  constructor(connections: number) {
    this.#connections = connections;
  }

  /** Responses being drained now. */
  get size(): number {
    return this.#draining.size;
  }

  /** The Exchange's onDraining hook. */
  readonly track = (exchange: Exchange, draining: boolean): void => {
    if (draining) this.#draining.add(exchange);
    else this.#draining.delete(exchange);
  };

  /** Cuts every drained response (the client is closing: nothing will reuse their connections). */
  cutAll(): void {
    for (const exchange of [...this.#draining]) exchange.stop();
    this.#draining.clear();
  }

  /** A request is about to go through the pool: makes room for it, and counts it until the returned function is called. */
  enter(): () => void {
    while (this.#inFlight + this.#draining.size >= this.#connections) {
      const oldest = this.#draining.values().next().value;
      if (oldest === undefined) break;
      this.#draining.delete(oldest);
      oldest.stop();
    }
    this.#inFlight += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight -= 1;
    };
  }
}
