import { AggregatorRegistry, Gauge, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { SimReplica } from './replica.js';

/** A Prometheus page: its text and Content-Type. */
export interface MetricsPage {
  text: string;
  contentType: string;
}

/** One replica's own page (`/replicas/<i>/metrics`): its registry as it is. */
export async function replicaPage(replica: SimReplica): Promise<MetricsPage> {
  return { text: await replica.metrics.render(), contentType: replica.metrics.contentType };
}

/**
 * The router's page (`/metrics`): the replicas' pages folded into one under the same names, so a scraper that reads
 * one simulator reads the fleet. Each metric folds by its `aggregator` (prom-client's AggregatorRegistry, made for a
 * Node cluster's workers): counters and histograms sum (requests, tokens, prefix-cache queries and hits, latency
 * buckets); the running and waiting gauges sum; KV cache usage is the replicas' average (equal-sized caches: the
 * fleet's share in use); the event-loop delay is the worst; `vllm:cache_config_info` keeps its block size with
 * `num_gpu_blocks` the replicas' total (the fleet's KV capacity). Adds `chatload_sim_replicas`. With one replica,
 * the replica's page itself, byte for byte what the simulator served before replicas.
 */
export async function routerPage(replicas: readonly SimReplica[]): Promise<MetricsPage> {
  if (replicas.length === 1) return replicaPage(replicas[0]!);
  const pages = await Promise.all(replicas.map((r) => r.metrics.registry.getMetricsAsJSON()));
  let totalBlocks = 0;
  for (const r of replicas) totalBlocks += r.scheduler.config.num_gpu_blocks;
  for (const page of pages) {
    for (const metric of page as MetricObjectWithValues<MetricValue<string>>[]) {
      if (metric.name !== 'vllm:cache_config_info') continue;
      for (const value of metric.values) value.labels = { ...value.labels, num_gpu_blocks: String(totalBlocks) };
    }
  }
  const registry = AggregatorRegistry.aggregate(pages);
  new Gauge({ name: 'chatload_sim_replicas', help: 'Replicas behind the simulator router (each page at /replicas/<i>/metrics).', registers: [registry] }).set(replicas.length);
  return { text: await registry.metrics(), contentType: registry.contentType };
}
