import * as z from 'zod';
import { option, positiveInt, readInt } from '../define.js';
import { datasetOptions } from './dataset.js';

/**
 * The options of `chatload trace stats`: the trace's reading options, shared with `run` (declared once in the dataset
 * table), and the KV cache size of the bounded hit ratio. `--kv-cache-tokens` belongs to this command only.
 */
export const traceStatsOptions = {
  inputFormat: datasetOptions.inputFormat,
  traceBlockSize: datasetOptions.traceBlockSize,
  traceWindow: datasetOptions.traceWindow,
  traceFilter: datasetOptions.traceFilter,
  kvCacheTokens: option({
    flags: '--kv-cache-tokens <tokens>',
    group: 'dataset',
    help: 'also give the hit ratio of a KV cache of this many tokens (LRU, whole blocks)',
    read: readInt,
    schema: positiveInt,
  }),
  json: option({ flags: '--json', group: 'outputs', help: 'print the statistics as JSON', schema: z.boolean(), default: false }),
  allowInvalidUtf8: datasetOptions.allowInvalidUtf8,
};

