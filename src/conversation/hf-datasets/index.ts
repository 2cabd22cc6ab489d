import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DatasetError } from '../../errors/index.js';
import { letLoopGo } from '../../util/loop-turns.js';
import type { SizeBounds } from '../size-bounds.js';
import { folderFiles } from './folder.js';
import { describeLayout, resolveLayout, type HfColumns, type Layout } from './layout.js';
import { HfRowSink, type RowsLoaded } from './rows.js';
import type { TableFile } from './table.js';

export { HfRowSink, type RowPlace, type RowsLoaded } from './rows.js';
export { describeLayout, resolveLayout, type HfColumns, type Layout } from './layout.js';

/** How a Hugging Face dataset is read: --columns and --split. */
export interface HfReadOptions {
  columns?: HfColumns;
  split?: string;
}

/** What -i names, when it is a Hugging Face dataset chatload reads as a table: a folder, a Parquet or an Arrow file. */
export type HfSourceKind = 'folder' | 'parquet' | 'arrow';

const HUB_ID = /^(?:hf:\/\/datasets\/)?[A-Za-z0-9][\w.-]*\/[\w.-]+$/;
const FILE_EXTENSION = /\.(jsonl?|ndjson|parquet|arrow|csv|txt|yaml|yml)$/i;

/**
 * The kind of table source `path` is, or undefined when it is a file for the JSON readers (or missing). A missing path
 * that reads as a Hub id (`owner/name`, `hf://datasets/owner/name`) is refused at once: chatload downloads no dataset.
 */
export async function hfSourceKind(path: string): Promise<HfSourceKind | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) {
    if (HUB_ID.test(path) && !FILE_EXTENSION.test(path) && (await stat(path.split('/')[0]!).catch(() => undefined)) === undefined) {
      const id = path.replace(/^hf:\/\/datasets\//, '');
      throw new DatasetError(
        { file: path },
        `no such file or folder, and chatload downloads no dataset (a run stays offline): fetch the Hub dataset first (huggingface-cli download ${id} --repo-type dataset --local-dir DIR) and pass -i DIR`,
      );
    }
    return undefined;
  }
  if (info.isDirectory()) return 'folder';
  if (!info.isFile()) return undefined;
  if (/\.parquet$/i.test(path)) return 'parquet';
  if (/\.(arrow|feather|ipc)$/i.test(path)) return 'arrow';
  return undefined;
}

/** A Parquet or Arrow file opened; hyparquet and apache-arrow are loaded on first use only (a lazy chunk of the bundle). */
async function openTable(file: string): Promise<TableFile> {
  if (/\.parquet$/i.test(file)) return (await import('./parquet.js')).openParquet(file);
  return (await import('./arrow.js')).openArrow(file);
}

/** Rows are converted for about this long between two turns of the event loop. */
const SLICE_MS = 2;

/** Reads one table file into the sink: its layout checked against the first file's columns, batch by batch. */
async function readTable(table: TableFile, layout: Layout, sink: HfRowSink): Promise<void> {
  const wanted = [layout.kind === 'messages' ? layout.messages : layout.prompt, ...(layout.kind === 'pair' ? [layout.response, layout.input] : []), layout.id, layout.system];
  const columns = wanted.filter((c): c is string => c !== undefined);
  const missing = columns.filter((c) => !table.columns.includes(c));
  if (missing.length > 0) throw new DatasetError({ file: table.file }, `no column ${JSON.stringify(missing[0])} (the first file has it); the columns are ${table.columns.map((c) => JSON.stringify(c)).join(', ')}`);
  let sliceStart = performance.now();
  for await (const batch of table.batches(columns)) {
    for (let i = 0; i < batch.count; i++) {
      sink.add(batch.row(i), { file: table.file, row: batch.firstRow + i, rowGroup: batch.group });
      if (performance.now() - sliceStart > SLICE_MS) {
        await letLoopGo();
        sliceStart = performance.now();
      }
    }
  }
}

/** A Hugging Face dataset as conversations, with the layout read and the files it came from. */
export interface HfLoaded extends RowsLoaded {
  layout: string;
  files: string[];
  split?: string;
}

/**
 * Loads a Parquet or Arrow file, or a dataset folder (save_to_disk, a DatasetDict's, or Hub Parquet shards), as
 * conversations: one a row, the layout from --columns or detected from the first file's columns.
 */
export async function loadHfTables(path: string, kind: HfSourceKind, options: HfReadOptions, bounds: Readonly<SizeBounds>, warn: (message: string) => void): Promise<HfLoaded> {
  const { files, split } = kind === 'folder' ? await folderFiles(path, options.split) : { files: [path], split: undefined };
  if (kind !== 'folder' && options.split !== undefined) warn(`${path}: --split ${options.split} applies to a dataset folder; this file is read whole`);
  let layout: Layout | undefined;
  let sink: HfRowSink | undefined;
  for (const file of files) {
    const table = await openTable(file);
    try {
      layout ??= resolveLayout(table.columns, options.columns ?? {}, { file });
      sink ??= new HfRowSink(layout, bounds, dirname(file));
      await readTable(table, layout, sink);
    } finally {
      await table.close();
    }
  }
  const loaded = sink!.finish(warn, path);
  return { ...loaded, layout: describeLayout(layout!), files, split };
}
export { isHfChatRow, jsonRow, jsonRowSink } from './json-rows.js';
