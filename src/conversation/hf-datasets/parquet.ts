import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import * as zlib from 'node:zlib';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type Compressors, type FileMetaData } from 'hyparquet';
import { DatasetError } from '../../errors/index.js';
import { letLoopGo } from '../../util/loop-turns.js';
import type { RowBatch, TableFile } from './table.js';

/**
 * The codecs hyparquet does not decode itself (it does Snappy, the default of pyarrow and of the Hub's Parquet files),
 * from node:zlib: gzip, Brotli, and Zstandard where this Node has it (22.15 and later). LZ4 is not read.
 */
function compressors(): Compressors {
  const zstd = (zlib as unknown as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;
  return {
    GZIP: (input) => new Uint8Array(gunzipSync(input)),
    BROTLI: (input) => new Uint8Array(brotliDecompressSync(input)),
    ...(zstd !== undefined ? { ZSTD: (input: Uint8Array) => new Uint8Array(zstd(input)) } : {}),
  };
}

/** The first line of an error from hyparquet, for a one-line DatasetError. */
function reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/**
 * A Parquet file read with hyparquet (pure JS): the footer first, then one row group at a time, only the columns
 * asked for, one column at a time. A column chunk (one column of one row group) is decoded in one go: the event loop
 * waits for that (docs/DATASETS.md, "Local Hugging Face datasets").
 */
export async function openParquet(file: string): Promise<TableFile> {
  const buffer = await asyncBufferFromFile(file);
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(buffer);
  } catch (error) {
    throw new DatasetError({ file }, `not a readable Parquet file: ${reason(error)}`);
  }
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  const codecs = compressors();
  async function* batches(wanted?: readonly string[]): AsyncGenerator<RowBatch> {
    let firstRow = 0;
    for (const [group, rowGroup] of metadata.row_groups.entries()) {
      const count = Number(rowGroup.num_rows);
      // One column at a time, the loop let go between them: a column chunk is hyparquet's unit of synchronous decoding.
      const names = wanted ?? columns;
      const values: Record<string, unknown>[][] = [];
      for (const name of names) {
        try {
          values.push(await parquetReadObjects({ file: buffer, metadata, rowStart: firstRow, rowEnd: firstRow + count, columns: [name], compressors: codecs }));
        } catch (error) {
          throw new DatasetError({ file, rowGroup: group, field: name }, `cannot decode the column chunk: ${reason(error)}`);
        }
        await letLoopGo();
      }
      const row = (i: number): Record<string, unknown> => Object.fromEntries(names.map((name, c) => [name, values[c]![i]![name]]));
      yield { count, row, group, firstRow };
      firstRow += count;
    }
  }
  return { file, columns, batches, close: () => Promise.resolve() };
}
