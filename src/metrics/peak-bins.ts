import type { RequestRecord } from './record.js';

/** PeakBins as toJSON() writes it: per-second counts, from second `first` on. */
export interface SerializedPeakBins {
  first: number;
  output_tokens: number[];
  in_flight: number[];
}

/** The peaks `vllm bench serve` reports, over one-second bins of the run's clock. */
export interface Peaks {
  /** Most output tokens that arrived within one second of the run. */
  max_output_tokens_per_s: number;
  /** Most requests in flight during one second (a request counts in every second it overlaps). */
  max_concurrent_requests: number;
}

/**
 * Per-second bins of output tokens and of requests in flight, as `vllm bench serve` computes max_output_tokens_per_s
 * and max_concurrent_requests. A record's output tokens are spread evenly over the chunks that carried them (a chunk
 * may hold several tokens), each at its arrival; a request is in flight in every second from its send to its end.
 * Memory is one entry per second of the run; bins merge by adding (workers, shards).
 */
export class PeakBins {
  #first = Number.POSITIVE_INFINITY;
  #tokens: number[] = [];
  #inFlight: number[] = [];

  /** Adds one record (the caller leaves warmup records out). Cost: its chunks plus the seconds it spans. */
  add(r: RequestRecord): void {
    const sent = Math.floor(r.sent_at_ms / 1000);
    const done = Math.floor(r.done_at_ms / 1000);
    this.#reach(sent, done);
    for (let s = sent; s <= done; s++) this.#inFlight[s - this.#first]! += 1;
    if (r.status !== 'ok' || r.first_token_at_ms === null || r.output_num_tokens <= 0) return;
    const chunks = r.itl_ms.length + 1;
    const perChunk = r.output_num_tokens / chunks;
    let t = r.first_token_at_ms;
    this.#addTokens(t, perChunk);
    for (const gap of r.itl_ms) {
      t += gap;
      this.#addTokens(t, perChunk);
    }
  }

  /** Adds other's bins to these. */
  merge(other: PeakBins): this {
    if (other.#tokens.length === 0) return this;
    this.#reach(other.#first, other.#first + other.#tokens.length - 1);
    const offset = other.#first - this.#first;
    other.#tokens.forEach((v, i) => (this.#tokens[offset + i]! += v));
    other.#inFlight.forEach((v, i) => (this.#inFlight[offset + i]! += v));
    return this;
  }

  /** The peaks; 0 when nothing was added. Tokens are rounded to the nearest whole token. */
  peaks(): Peaks {
    let tokens = 0;
    let inFlight = 0;
    for (const v of this.#tokens) tokens = Math.max(tokens, v);
    for (const v of this.#inFlight) inFlight = Math.max(inFlight, v);
    return { max_output_tokens_per_s: Math.round(tokens), max_concurrent_requests: inFlight };
  }

  toJSON(): SerializedPeakBins {
    return { first: Number.isFinite(this.#first) ? this.#first : 0, output_tokens: [...this.#tokens], in_flight: [...this.#inFlight] };
  }

  static fromJSON(value: SerializedPeakBins): PeakBins {
    const out = new PeakBins();
    if (value.output_tokens.length > 0) {
      out.#first = value.first;
      out.#tokens = [...value.output_tokens];
      out.#inFlight = [...value.in_flight];
    }
    return out;
  }

  #addTokens(atMs: number, tokens: number): void {
    const s = Math.floor(atMs / 1000);
    this.#reach(s, s);
    this.#tokens[s - this.#first]! += tokens;
  }

  /** Grows the bins to cover seconds `from`..`to`. */
  #reach(from: number, to: number): void {
    // The first bins are pushed by the same loop as later ones, not made by new Array(n).fill(0): that made holey
    // arrays, and the spread below packed ones, so add() met two array shapes (issue 17). Packed from the start.
    if (this.#tokens.length === 0) this.#first = from;
    else if (from < this.#first) {
      const pad = new Array<number>(this.#first - from).fill(0);
      this.#tokens = [...pad, ...this.#tokens];
      this.#inFlight = [...pad, ...this.#inFlight];
      this.#first = from;
    }
    const need = to - this.#first + 1;
    while (this.#tokens.length < need) {
      this.#tokens.push(0);
      this.#inFlight.push(0);
    }
  }
}
