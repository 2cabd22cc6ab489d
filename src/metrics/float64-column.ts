// Per-record float64 values: a growable column in chunks, and Float64Arrays as base64 (how a RunAggregate's columns
// travel between worker threads as JSON).

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

/** Values per chunk of a Float64Column: 512 KB, allocated in well under a millisecond. */
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;

/**
 * A growable column of float64 values (8 bytes each) in fixed chunks: growing never copies what is there, so an
 * append never holds the event loop (a doubling array copies 16 MB at 2 million values). Values are read one at a
 * time, or copied out whole at the end (toArray()).
 */
export class Float64Column {
  readonly #chunks: Float64Array[] = [];
  #length = 0;

  /** Values held. */
  get length(): number {
    return this.#length;
  }

  /** Appends one value. */
  push(value: number): void {
    const offset = this.#length & CHUNK_MASK;
    if (offset === 0) this.#addChunk();
    this.#chunks[this.#chunks.length - 1]![offset] = value;
    this.#length++;
  }

  /**
   * A new chunk, once per CHUNK values, in its own method: push() is inlined into hot callers (RecordLog.add) and
   * optimized with only the first chunk's push seen (on the empty array, an elements-kind transition); the next
   * chunk's push, on an array of chunks, then missed that map and deoptimized the caller (issue 17). Called this
   * rarely, this method is not inlined, and its own inline cache handles both maps.
   */
  #addChunk(): void {
    this.#chunks.push(new Float64Array(CHUNK));
  }

  /** Appends every value. */
  pushAll(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) this.push(values[i]!);
  }

  /** Value i (0 <= i < length). */
  at(i: number): number {
    return this.#chunks[i >>> CHUNK_BITS]![i & CHUNK_MASK]!;
  }

  /** Sets value i (0 <= i < length). */
  set(i: number, value: number): void {
    this.#chunks[i >>> CHUNK_BITS]![i & CHUNK_MASK] = value;
  }

  /** Values [start, end): a view when they lie in one chunk, else a copy. */
  slice(start: number, end: number): Float64Array {
    // An empty range of a column with no chunk yet (every record so far had no gaps): no chunk to view.
    if (end === start) return new Float64Array(0);
    const chunk = start >>> CHUNK_BITS;
    if ((end - 1) >>> CHUNK_BITS === chunk) return this.#chunks[chunk]!.subarray(start & CHUNK_MASK, (start & CHUNK_MASK) + end - start);
    const out = new Float64Array(end - start);
    for (let i = start; i < end; i++) out[i - start] = this.at(i);
    return out;
  }

  /** Every value, copied into one array. */
  toArray(): Float64Array {
    const out = new Float64Array(this.#length);
    this.#chunks.forEach((chunk, c) => out.set(chunk.subarray(0, Math.min(CHUNK, this.#length - c * CHUNK)), c * CHUNK));
    return out;
  }

  /** A column holding `values` (a copy). */
  static of(values: ArrayLike<number>): Float64Column {
    const out = new Float64Column();
    out.pushAll(values);
    return out;
  }
}
