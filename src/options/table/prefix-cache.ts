import { option, positiveInt, readInt } from '../define.js';

/** The expected-cache model: the block size its index cuts prompts into, and the KV capacity it evicts at. */
export const prefixCacheOptions = {
  cacheBlockSize: option({
    flags: '--cache-block-size <tokens>',
    group: 'outputs',
    help: "tokens per KV block of the expected-cache model, overriding the server's own (docs/ENGINES.md, cache semantics)",
    defaultText: "the server's: vLLM's cache_config_info block_size, SGLang's page_size, 1 for llama.cpp; else 16",
    read: readInt,
    schema: positiveInt,
  }),
  kvCacheTokens: option({
    flags: '--kv-cache-tokens <n>',
    group: 'outputs',
    help: "KV cache capacity of the expected-cache model, in tokens: it then evicts least-recently-used blocks as a server does; default: the server's own capacity when its /metrics says it (vLLM's cache_config_info), else infinite",
    read: readInt,
    schema: positiveInt,
  }),
};
