/*
 * Token ids written into one growing Uint32Array (issue #14). A long text's ids come slice by slice; collected in a JS
 * array they cost a copy of the whole array each time it grows (~6 ms in one piece at a million ids) and, as the
 * arrays the tokenizer returns per slice, tens of MB of garbage per 10 MB text for the young generation's collector.
 * A Uint32Array is never scanned by the collector, and its room can be made before a large text is encoded.
 */
/**
 * Ids to make room for before encoding a text of `chars` characters: half a token per character, more than English
 * text (~0.25) or the approximate tokenizer's `word ` (0.4) make, so the array rarely grows while a text is encoded.
 * Not one per character: 4 bytes per character would be a 40 MB buffer for a 10 MB text, and external memory that
 * size makes V8 collect garbage for its pressure.
 */
export function idsFor(chars: number): number {
  return Math.ceil(chars / 2);
}

/** Arrays over this many ids are allocated uninitialized (see uninitializedIds). */
const UNINITIALIZED_IDS = 16 * 1024;

/**
 * A Uint32Array of `length` ids whose contents are undefined (only what is written into it is read): a zero-filled
 * one of a million ids cost ~1-1.5 ms in one piece once the allocator reuses freed memory, which it must clear.
 * Buffer.allocUnsafeSlow is Node's documented uninitialized allocation (its own ArrayBuffer, never the shared pool).
 * Every array has an ArrayBuffer of its own, even a small one: the simulator keeps an encoder's ids as a request's
 * tokens when their buffer has room past them (sim/scheduler-types.ts), so the buffer must be this array's alone. (A view
 * of Node's shared Buffer pool, tried for small arrays in issue 17 to save their ~2-5 µs allocation, let the engine
 * write output ids over other Buffers cut from the same pool: test/sim/scheduler.test.ts.)
 */
function uninitializedIds(length: number): Uint32Array {
  if (length <= UNINITIALIZED_IDS) return new Uint32Array(length);
  const bytes = Buffer.allocUnsafeSlow(length * 4);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, length);
}

export class IdSink {
  /** The ids: only `[0, length)` is meaningful. */
  ids: Uint32Array;
  /** Ids held; set it lower to drop the last ones. */
  length = 0;
  #skip = 0;

  constructor(capacity = 256) {
    this.ids = uninitializedIds(capacity);
  }

  /** The next `n` ids pushed are dropped (a piece's first id that the previous piece already holds). */
  skipNext(n: number): void {
    this.#skip = n;
  }

  /** Makes room for `need` ids in all (at least doubling). */
  reserve(need: number): void {
    if (need <= this.ids.length) return;
    const grown = uninitializedIds(Math.max(need, this.ids.length * 2));
    grown.set(this.ids.subarray(0, this.length));
    this.ids = grown;
  }

  push(id: number): void {
    if (this.#skip > 0) {
      this.#skip--;
      return;
    }
    if (this.length === this.ids.length) this.reserve(this.length + 1);
    this.ids[this.length++] = id;
  }

  pushAll(ids: readonly number[]): void {
    for (let i = 0; i < ids.length; i++) this.push(ids[i]!);
  }
}
