/** A server's KV cache capacity, as its /metrics states it. */
export interface ServerKvCapacity {
  /** KV blocks. */
  blocks: number;
  /** Tokens per block. */
  blockSize: number;
  /** Where it was read, e.g. `vllm:cache_config_info`. */
  source: string;
  /**
   * Replicas whose capacities the page sums (the simulator's router page states `chatload_sim_replicas N` and the
   * fleet's `num_gpu_blocks`); 1 for a server's own page.
   */
  replicas: number;
}

/**
 * The KV capacity a /metrics page states, or undefined. vLLM exposes it as the info gauge `vllm:cache_config_info`,
 * whose labels are its CacheConfig (`num_gpu_blocks="…"`, `block_size="…"`, value 1). SGLang, llama.cpp and TGI
 * state no block count there (docs/ENGINES.md). Read with a regex on the labels: the gauge's value is not the point.
 */
export function readKvCapacity(text: string): ServerKvCapacity | undefined {
  const lines = text.split('\n');
  const replicasLine = lines.find((line) => line.startsWith('chatload_sim_replicas '));
  const replicas = replicasLine === undefined ? 1 : Number(replicasLine.slice('chatload_sim_replicas '.length));
  for (const line of lines) {
    if (!line.startsWith('vllm:cache_config_info{')) continue;
    const label = (name: string): number | undefined => {
      const m = new RegExp(`[{,]\\s*${name}="([0-9]+)"`).exec(line);
      return m === null ? undefined : Number(m[1]);
    };
    const blocks = label('num_gpu_blocks');
    const blockSize = label('block_size');
    if (blocks !== undefined && blockSize !== undefined && blocks > 0 && blockSize > 0) {
      return { blocks, blockSize, source: 'vllm:cache_config_info', replicas: Number.isSafeInteger(replicas) && replicas > 1 ? replicas : 1 };
    }
  }
  return undefined;
}
