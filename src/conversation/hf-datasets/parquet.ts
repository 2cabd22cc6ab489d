import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import * as zlib from 'node:zlib';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type Compressors, type FileMetaData } from 'hyparquet';
import { DatasetError } from '../../errors/index.js';
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
 * asked for. A row group is decoded in one go: the event loop waits for one row group's decoding (the Hub's files
 * keep them to about 100 MB uncompressed at most; docs/DATASETS.md).
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
  async function* batches(wanted?: readonly string[]): AsyncGenerator<RowBatch> {
    let firstRow = 0;
    for (const [group, rowGroup] of metadata.row_groups.entries()) {
      const count = Number(rowGroup.num_rows);
      let rows: Record<string, unknown>[];
      try {
        rows = await parquetReadObjects({ file: buffer, metadata, rowStart: firstRow, rowEnd: firstRow + count, columns: wanted ? [...wanted] : undefined, compressors: compressors() });
      } catch (error) {
        throw new DatasetError({ file, rowGroup: group }, `cannot decode the row group: ${reason(error)}`);
      }
      yield { rows, group, firstRow };
      firstRow += count;
    }
  }
  return { file, columns, batches, close: () => Promise.resolve() };
}
