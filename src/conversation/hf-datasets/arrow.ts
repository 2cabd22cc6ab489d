import { open } from 'node:fs/promises';
import { RecordBatchReader, Vector, type RecordBatch } from 'apache-arrow';
import { DatasetError } from '../../errors/index.js';
import type { RowBatch, TableFile } from './table.js';

/** An Arrow value as plain data: vectors (lists) as arrays, struct rows as objects, recursively. */
function plainArrow(value: unknown): unknown {
  if (value instanceof Vector) return Array.from(value as Iterable<unknown>, plainArrow);
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  const json = (value as { toJSON?: () => unknown }).toJSON?.() ?? value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(json as Record<string, unknown>)) out[key] = plainArrow(field);
  return out;
}

function reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/**
 * An Arrow IPC file, stream format (what `datasets`' save_to_disk writes) or file format, read with apache-arrow one
 * record batch at a time (save_to_disk writes batches of 1,000 rows).
 */
export async function openArrow(file: string): Promise<TableFile> {
  const handle = await open(file, 'r');
  let reader: Awaited<ReturnType<typeof RecordBatchReader.from>>;
  try {
    reader = await RecordBatchReader.from(handle);
    await reader.open();
  } catch (error) {
    await handle.close();
    throw new DatasetError({ file }, `not a readable Arrow IPC file: ${reason(error)}`);
  }
  const columns = reader.schema?.fields.map((f) => f.name) ?? [];
  async function* batches(wanted?: readonly string[]): AsyncGenerator<RowBatch> {
    let group = 0;
    let firstRow = 0;
    const iterator = (reader as AsyncIterable<RecordBatch>)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<RecordBatch>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw new DatasetError({ file, rowGroup: group }, `cannot read the record batch: ${reason(error)}`);
      }
      if (next.done === true) return;
      const batch = next.value;
      const vectors = (wanted ?? columns).map((name) => [name, batch.getChild(name)] as const);
      const row = (i: number): Record<string, unknown> => Object.fromEntries(vectors.map(([name, vector]) => [name, vector === null ? undefined : plainArrow(vector.get(i))]));
      yield { count: batch.numRows, row, group, firstRow };
      group += 1;
      firstRow += batch.numRows;
    }
  }
  return { file, columns, batches, close: () => handle.close() };
}
