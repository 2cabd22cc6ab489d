import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { DatasetError } from '../../errors/index.js';

/** The table files of a dataset folder, in order, and the split they hold. */
export interface FolderFiles {
  files: string[];
  split: string;
}

/** The default split (as `datasets` names it) when --split is not given. */
export const DEFAULT_SPLIT = 'train';

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** A JSON file of the folder, read whole (they are small: dataset_dict.json, state.json). */
async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch (error) {
    throw new DatasetError({ file }, `cannot read it as JSON: ${(error as Error).message.split('\n')[0]}`);
  }
}

/**
 * The Arrow files of a `Dataset.save_to_disk` folder: state.json's `_data_files` (`data-00000-of-0000N.arrow`), in
 * order. A --split given that differs from the folder's `_split` is refused.
 */
async function savedDataset(dir: string, split: string | undefined): Promise<FolderFiles> {
  const stateFile = join(dir, 'state.json');
  const state = (await readJson(stateFile)) as { _data_files?: unknown; _split?: unknown };
  const files = Array.isArray(state._data_files) ? state._data_files.map((f) => (f as { filename?: unknown })?.filename) : undefined;
  if (files === undefined || files.length === 0 || !files.every((f): f is string => typeof f === 'string' && f !== '' && basename(f) === f)) {
    throw new DatasetError({ file: stateFile }, 'expected "_data_files" to list the Arrow files [{"filename": "data-00000-of-00001.arrow"}, ...], as save_to_disk writes it');
  }
  const own = typeof state._split === 'string' ? state._split : undefined;
  if (split !== undefined && own !== undefined && split !== own) throw new DatasetError({ file: dir }, `--split ${split}: this folder holds the split "${own}" only`);
  for (const f of files) if (!(await isFile(join(dir, f)))) throw new DatasetError({ file: stateFile }, `"_data_files" names ${JSON.stringify(f)}, which is not in the folder`);
  return { files: files.map((f) => join(dir, f)), split: own ?? split ?? DEFAULT_SPLIT };
}

/** A DatasetDict's folder (dataset_dict.json `{"splits": [...]}`, one save_to_disk folder per split): the split asked for. */
async function savedDatasetDict(dir: string, split: string | undefined): Promise<FolderFiles> {
  const dictFile = join(dir, 'dataset_dict.json');
  const splits = ((await readJson(dictFile)) as { splits?: unknown }).splits;
  if (!Array.isArray(splits) || !splits.every((s): s is string => typeof s === 'string')) throw new DatasetError({ file: dictFile }, 'expected {"splits": ["train", ...]}, as DatasetDict.save_to_disk writes it');
  const wanted = split ?? DEFAULT_SPLIT;
  if (!splits.includes(wanted)) throw new DatasetError({ file: dir }, `no split "${wanted}"; the splits are ${splits.map((s) => JSON.stringify(s)).join(', ')} (choose one with --split)`);
  return savedDataset(join(dir, wanted), wanted);
}

/** How deep a folder of Parquet shards is searched: `data/train-*.parquet` is 1 deep, `<config>/train/0000.parquet` 2. */
const MAX_DEPTH = 3;

async function parquetFiles(dir: string, depth = 0): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory() && depth < MAX_DEPTH) out.push(...(await parquetFiles(path, depth + 1)));
    else if (entry.isFile() && entry.name.endsWith('.parquet')) out.push(path);
  }
  return out;
}

/**
 * A Parquet file's split and config as the Hub lays them out: `data/train-00000-of-00002.parquet` (push_to_hub,
 * snapshot_download; a hash may follow the count), `<config>/train/0000.parquet` (refs/convert/parquet), or `train.parquet`.
 */
function shardPlace(root: string, file: string): { split: string; config: string } {
  const parts = relative(root, file).split(/[\\/]/);
  const name = parts[parts.length - 1]!;
  const named = /^([A-Za-z0-9_.]+?)(?:-\d{5}-of-\d{5}(?:-[0-9a-f]+)?)?\.parquet$/.exec(name);
  if (/^\d+\.parquet$/.test(name) && parts.length >= 2) return { split: parts[parts.length - 2]!, config: parts.slice(0, -2).join('/') };
  return { split: named?.[1] ?? name.replace(/\.parquet$/, ''), config: parts.slice(0, -1).filter((p) => p !== 'data').join('/') };
}

/** The Parquet shards of one split (and one config) in a folder. */
async function parquetShards(dir: string, split: string | undefined): Promise<FolderFiles> {
  const all = (await parquetFiles(dir)).map((file) => ({ file, ...shardPlace(dir, file) }));
  if (all.length === 0) {
    throw new DatasetError({ file: dir }, 'no dataset here: expected dataset_dict.json or state.json (a save_to_disk folder) or .parquet files (Hub shards such as data/train-00000-of-00001.parquet)');
  }
  const configs = [...new Set(all.map((s) => s.config))];
  if (configs.length > 1) throw new DatasetError({ file: dir }, `Parquet files of several configs (${configs.map((c) => JSON.stringify(c || '.')).join(', ')}); pass the config's folder to -i`);
  const splits = [...new Set(all.map((s) => s.split))];
  const wanted = split ?? (splits.length === 1 && split === undefined ? splits[0]! : DEFAULT_SPLIT);
  const files = all.filter((s) => s.split === wanted).map((s) => s.file);
  if (files.length === 0) throw new DatasetError({ file: dir }, `no split "${wanted}"; the splits are ${splits.map((s) => JSON.stringify(s)).join(', ')} (choose one with --split)`);
  return { files, split: wanted };
}

/** The table files a dataset folder holds for the split asked (undefined: `train`, or the folder's only split). */
export async function folderFiles(dir: string, split: string | undefined): Promise<FolderFiles> {
  if (await isFile(join(dir, 'dataset_dict.json'))) return savedDatasetDict(dir, split);
  if (await isFile(join(dir, 'state.json'))) return savedDataset(dir, split);
  return parquetShards(dir, split);
}
