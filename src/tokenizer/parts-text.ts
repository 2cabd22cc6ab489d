/*
 * A text given as its parts, never concatenated (issue #14). A chat template renders a message as markup + content +
 * markup; that concatenation is a V8 rope, copied into one flat string the first time anything reads it: 3-8 ms in
 * one piece for a 10 MB message. Kept as parts, a reader asks for `slice(from, to)` and gets a slice of the one part
 * holding that range (a flat string's slice is a view, never a copy), or, across a part boundary, the pieces of the
 * few parts it overlaps concatenated: at most the range's own length is copied, and readers ask for ranges of at most
 * ~1 MB (a search window, a tokenizer slice).
 */

export class PartsText {
  readonly #parts: readonly string[];
  /** #starts[i]: the offset of part i in the text; #starts[#parts.length] is the length. */
  readonly #starts: number[];

  /** The text `parts.join('')`; empty parts are dropped. */
  constructor(parts: readonly string[]) {
    const kept: string[] = [];
    const starts = [0];
    let length = 0;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (p.length === 0) continue;
      kept.push(p);
      length += p.length;
      starts.push(length);
    }
    this.#parts = kept;
    this.#starts = starts;
  }

  /** The parts, none empty. */
  get parts(): readonly string[] {
    return this.#parts;
  }

  get length(): number {
    return this.#starts[this.#starts.length - 1]!;
  }

  /** The index of the part holding offset `at` (0 <= at < length): binary search over the starts. */
  #partAt(at: number): number {
    let lo = 0;
    let hi = this.#parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.#starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** text[from, to) as a string (bounds clamped as String.prototype.slice clamps non-negative ones). */
  slice(from: number, to: number = this.length): string {
    const end = Math.min(to, this.length);
    if (from >= end) return '';
    let i = this.#partAt(from);
    const first = this.#parts[i]!;
    const firstStart = this.#starts[i]!;
    if (end <= firstStart + first.length) return first.slice(from - firstStart, end - firstStart);
    let out = first.slice(from - firstStart);
    for (i++; this.#starts[i]! < end; i++) out += this.#parts[i]!.slice(0, end - this.#starts[i]!);
    return out;
  }

  /** text[from, to) as parts, none of them copied (slices of flat strings are views). */
  sub(from: number, to: number = this.length): PartsText {
    const end = Math.min(to, this.length);
    if (from >= end) return new PartsText([]);
    const out: string[] = [];
    for (let i = this.#partAt(from); i < this.#parts.length && this.#starts[i]! < end; i++) {
      const start = this.#starts[i]!;
      out.push(this.#parts[i]!.slice(Math.max(0, from - start), end - start));
    }
    return new PartsText(out);
  }
}
