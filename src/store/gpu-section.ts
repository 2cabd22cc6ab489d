import type { GpuResults } from '../metrics/gpu-types.js';

/**
 * results.json's `gpu` (GPU power and energy from a dcgm-exporter page, issue #32 part 5), checked for shape; null when
 * absent (no GPU page, or a file written before it existed) or not the shape chatload writes.
 */
export function gpuSectionOf(doc: Record<string, unknown> | null): GpuResults | null {
  const gpu = doc?.gpu;
  if (!isObject(gpu) || !isObject(gpu.total) || !Array.isArray(gpu.gpus) || !Array.isArray(gpu.total.samples)) return null;
  const rows = gpu.gpus.filter((r): r is Record<string, unknown> => isObject(r) && typeof r.id === 'string' && Array.isArray(r.samples));
  return { ...(gpu as unknown as GpuResults), gpus: rows as unknown as GpuResults['gpus'], warnings: Array.isArray(gpu.warnings) ? gpu.warnings.filter((w): w is string => typeof w === 'string') : [] };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
