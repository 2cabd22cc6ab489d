import * as z from 'zod';
import { fraction, option, positiveInt, positiveNumber, readInt, readNumber, text } from '../define.js';
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


/** A scale factor of `trace synthesize`, 1 by default. */
const scale = (flags: string, help: string) => option({ flags, group: 'dataset', help, read: readNumber, schema: positiveNumber.max(1e6, 'expected at most 1,000,000'), default: 1 });

/**
 * The options of `chatload trace synthesize IN -o OUT`: a new trace in IN's format, scaled in rate and lengths, its
 * shared-prefix structure kept or set (docs/DATASETS.md, "Trace synthesis").
 */
export const traceSynthesizeOptions = {
  output: option({ flags: '-o, --output <file>', group: 'outputs', help: 'where to write the new trace (written atomically: whole or not at all)', required: true, schema: text }),
  rateScale: scale('--rate-scale <k>', "multiplies the request rate by K: every time from the trace's first request is divided by K (and Mooncake's delays)"),
  islScale: scale('--isl-scale <k>', 'multiplies every input length by K (rounded at random to a whole token, so the mean scales by K; hash ids follow, each block becoming K blocks)'),
  oslScale: scale('--osl-scale <k>', 'multiplies every output length by K (rounded at random, so the mean scales by K; a failed request, 0, stays 0)'),
  prefixShare: option({
    flags: '--prefix-share <f>',
    group: 'dataset',
    help: "sets the share of input tokens a prefix cache could reuse: the theoretical hit ratio `trace stats` reports (unbounded cache), by rebuilding the hash ids (Mooncake and Bailian only)",
    defaultText: "the trace's own structure, kept",
    read: readNumber,
    schema: fraction,
  }),
  seed: datasetOptions.seed,
  inputFormat: datasetOptions.inputFormat,
  traceBlockSize: datasetOptions.traceBlockSize,
  allowInvalidUtf8: datasetOptions.allowInvalidUtf8,
};
