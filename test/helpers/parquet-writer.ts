// A minimal Parquet writer for test fixtures, hand-encoded from the Parquet format spec (apache/parquet-format,
// src/main/thrift/parquet.thrift, and README.md's "File format"), since no Parquet writer is installed (hyparquet only
// reads, pyarrow is absent): flat columns of UTF-8 text (BYTE_ARRAY, converted type UTF8) or INT64, REQUIRED or
// OPTIONAL (nulls), one data page (v1) per column chunk, PLAIN encoding, no compression, any number of row groups.
// The footer is Thrift's compact protocol. test/conversation/hf-datasets.test.ts checks that hyparquet reads it back.
import { writeFileSync } from 'node:fs';

/** One column: its name and its values (null for a missing value: the column is then OPTIONAL). */
export interface ParquetColumn {
  name: string;
  type: 'utf8' | 'int64';
  values: (string | bigint | null)[];
}

/** Thrift compact protocol, the few parts a footer and a page header use. */
class Compact {
  readonly bytes: number[] = [];
  #last: number[] = [0];

  varint(n: bigint): void {
    let v = n;
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      this.bytes.push(byte);
    } while (v !== 0n);
  }
  zigzag(n: number | bigint): void {
    const v = BigInt(n);
    this.varint(v >= 0n ? v << 1n : ((-v) << 1n) - 1n);
  }
  field(id: number, type: number): void {
    const delta = id - this.#last[this.#last.length - 1]!;
    if (delta > 0 && delta <= 15) this.bytes.push((delta << 4) | type);
    else {
      this.bytes.push(type);
      this.zigzag(id);
    }
    this.#last[this.#last.length - 1] = id;
  }
  i32(id: number, n: number): void {
    this.field(id, 5);
    this.zigzag(n);
  }
  i64(id: number, n: number | bigint): void {
    this.field(id, 6);
    this.zigzag(n);
  }
  binary(id: number, data: Uint8Array | string): void {
    this.field(id, 8);
    this.raw(data);
  }
  raw(data: Uint8Array | string): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.varint(BigInt(bytes.length));
    this.bytes.push(...bytes);
  }
  /** A list field of `count` elements of `type` (12 for structs, 5 for i32, 8 for binary); write them after. */
  list(id: number, type: number, count: number): void {
    this.field(id, 9);
    this.bytes.push(count < 15 ? (count << 4) | type : 0xf0 | type);
    if (count >= 15) this.varint(BigInt(count));
  }
  struct(id: number | undefined, body: () => void): void {
    if (id !== undefined) this.field(id, 12);
    this.#last.push(0);
    body();
    this.bytes.push(0); // stop
    this.#last.pop();
  }
}

/** The RLE/bit-packing hybrid's RLE runs of 1-bit definition levels, with their 4-byte length prefix. */
function definitionLevels(values: readonly unknown[]): Buffer {
  const runs: number[] = [];
  for (let i = 0; i < values.length; ) {
    const level = values[i] === null ? 0 : 1;
    let j = i;
    while (j < values.length && (values[j] === null ? 0 : 1) === level) j++;
    const header = new Compact();
    header.varint(BigInt(j - i) << 1n);
    runs.push(...header.bytes, level);
    i = j;
  }
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(runs.length);
  return Buffer.concat([prefix, Buffer.from(runs)]);
}

function plainValues(column: ParquetColumn, values: readonly (string | bigint | null)[]): Buffer {
  const parts: Buffer[] = [];
  for (const v of values) {
    if (v === null) continue;
    if (column.type === 'int64') {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(v as bigint);
      parts.push(b);
    } else {
      const text = Buffer.from(v as string, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(text.length);
      parts.push(length, text);
    }
  }
  return Buffer.concat(parts);
}

/** One column chunk: a page header (DATA_PAGE, PLAIN, definition levels RLE) and its page. */
function columnChunk(column: ParquetColumn, values: readonly (string | bigint | null)[], optional: boolean): Buffer {
  const page = Buffer.concat([...(optional ? [definitionLevels(values)] : []), plainValues(column, values)]);
  const header = new Compact();
  header.struct(undefined, () => {
    header.i32(1, 0); // type: DATA_PAGE
    header.i32(2, page.length); // uncompressed_page_size
    header.i32(3, page.length); // compressed_page_size
    header.struct(5, () => {
      header.i32(1, values.length); // num_values
      header.i32(2, 0); // encoding: PLAIN
      header.i32(3, 3); // definition_level_encoding: RLE
      header.i32(4, 3); // repetition_level_encoding: RLE
    });
  });
  return Buffer.concat([Buffer.from(header.bytes), page]);
}

/** Writes `columns` (all of the same length) to `file` as a Parquet file of row groups of `rowGroupSize` rows. */
export function writeParquet(file: string, columns: readonly ParquetColumn[], rowGroupSize: number): void {
  const rows = columns[0]?.values.length ?? 0;
  const optional = columns.map((c) => c.values.includes(null));
  const chunks: Buffer[] = [Buffer.from('PAR1')];
  let offset = 4;
  const groups: { rows: number; chunks: { offset: number; size: number; values: number }[] }[] = [];
  for (let start = 0; start < rows; start += rowGroupSize) {
    const count = Math.min(rowGroupSize, rows - start);
    const group = { rows: count, chunks: [] as { offset: number; size: number; values: number }[] };
    columns.forEach((column, c) => {
      const chunk = columnChunk(column, column.values.slice(start, start + count), optional[c]!);
      group.chunks.push({ offset, size: chunk.length, values: count });
      chunks.push(chunk);
      offset += chunk.length;
    });
    groups.push(group);
  }
  const meta = new Compact();
  meta.struct(undefined, () => {
    meta.i32(1, 1); // version
    meta.list(2, 12, columns.length + 1); // schema: the root, then one leaf a column
    meta.struct(undefined, () => {
      meta.binary(4, 'schema');
      meta.i32(5, columns.length); // num_children
    });
    columns.forEach((column, c) => {
      meta.struct(undefined, () => {
        meta.i32(1, column.type === 'int64' ? 2 : 6); // type: INT64 or BYTE_ARRAY
        meta.i32(3, optional[c] ? 1 : 0); // repetition_type: OPTIONAL or REQUIRED
        meta.binary(4, column.name);
        if (column.type === 'utf8') meta.i32(6, 0); // converted_type: UTF8
      });
    });
    meta.i64(3, rows); // num_rows
    meta.list(4, 12, groups.length); // row_groups
    for (const group of groups) {
      meta.struct(undefined, () => {
        meta.list(1, 12, columns.length); // columns
        group.chunks.forEach((chunk, c) => {
          meta.struct(undefined, () => {
            meta.i64(2, chunk.offset); // file_offset
            meta.struct(3, () => {
              meta.i32(1, columns[c]!.type === 'int64' ? 2 : 6); // type
              meta.list(2, 5, 2); // encodings: PLAIN, RLE
              meta.zigzag(0);
              meta.zigzag(3);
              meta.list(3, 8, 1); // path_in_schema
              meta.raw(columns[c]!.name);
              meta.i32(4, 0); // codec: UNCOMPRESSED
              meta.i64(5, chunk.values); // num_values
              meta.i64(6, chunk.size); // total_uncompressed_size
              meta.i64(7, chunk.size); // total_compressed_size
              meta.i64(9, chunk.offset); // data_page_offset
            });
          });
        });
        meta.i64(2, group.chunks.reduce((n, c) => n + c.size, 0)); // total_byte_size
        meta.i64(3, group.rows); // num_rows
      });
    }
    meta.binary(6, 'chatload test/helpers/parquet-writer.ts'); // created_by
  });
  const footer = Buffer.from(meta.bytes);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length);
  chunks.push(footer, length, Buffer.from('PAR1'));
  writeFileSync(file, Buffer.concat(chunks));
}
