// Float64Arrays as base64 strings: how a RunAggregate's per-record columns travel between worker threads as JSON.

/** The bytes of `values` (platform byte order: the reader is a thread of the same process) in base64. */
export function float64ToBase64(values: Float64Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/** Decodes float64ToBase64()'s output into a new array of at least `minLength` values (the rest 0). */
export function float64FromBase64(base64: string, minLength = 0): Float64Array {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.byteLength % 8 !== 0) throw new TypeError('not a base64 Float64Array (length not a multiple of 8 bytes)');
  const out = new Float64Array(Math.max(minLength, bytes.byteLength / 8));
  // Copied through a Uint8Array view: the Buffer's own offset need not be 8-byte aligned.
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** A growable Float64Array (doubling), for per-record values kept at 8 bytes each. */
export class Float64Column {
  #data: Float64Array;
  #length = 0;

  constructor(initialCapacity = 1024) {
    this.#data = new Float64Array(initialCapacity);
  }

  /** Values held. */
  get length(): number {
    return this.#length;
  }

  /** Appends one value. */
  push(value: number): void {
    if (this.#length === this.#data.length) this.#grow(this.#length + 1);
    this.#data[this.#length++] = value;
  }

  /** Appends every value. */
  pushAll(values: Float64Array): void {
    if (this.#length + values.length > this.#data.length) this.#grow(this.#length + values.length);
    this.#data.set(values, this.#length);
    this.#length += values.length;
  }

  /** The values, as a view (valid until the next push). */
  view(): Float64Array {
    return this.#data.subarray(0, this.#length);
  }

  /** A column holding `values` (a copy). */
  static of(values: Float64Array): Float64Column {
    const out = new Float64Column(Math.max(1, values.length));
    out.pushAll(values);
    return out;
  }

  #grow(needed: number): void {
    const grown = new Float64Array(Math.max(needed, this.#data.length * 2));
    grown.set(this.#data.subarray(0, this.#length));
    this.#data = grown;
  }
}
