/**
 * NVIDIA dcgm-exporter's page (issue #32, part 5): the GPUs' power, utilisation, framebuffer and energy counter, one
 * label set per GPU. Names, units and labels from the exporter's own source (docs/ENGINES.md, "GPU exporters"):
 * etc/default-counters.csv and internal/pkg/rendermetrics/render_metrics.go of NVIDIA/dcgm-exporter.
 */

import type { GpuRowLabels } from '../metrics/gpu-types.js';

/** The DCGM fields read, by what they are: W, %, MiB, and mJ since boot (a counter). */
export const DCGM_FIELDS = {
  power_w: 'DCGM_FI_DEV_POWER_USAGE',
  util_pct: 'DCGM_FI_DEV_GPU_UTIL',
  fb_used_mib: 'DCGM_FI_DEV_FB_USED',
  energy_mj: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
} as const;

type Field = keyof typeof DCGM_FIELDS;

/**
 * The sane range of each field; a value outside it is nonsense and skipped (a warning counts it). The exporter itself
 * skips DCGM's "blank" values (gpu_collector.go toString), but older ones printed them: 9223372036854775794 in its
 * README. No GPU draws 10 kW; an int64 blank is far past 2^53 mJ.
 */
const RANGE: Record<Field, readonly [number, number]> = {
  power_w: [0, 10_000],
  util_pct: [0, 100],
  fb_used_mib: [0, 2 ** 31],
  energy_mj: [0, 2 ** 53],
};

/** The labels kept of a GPU's series, each cut to LABEL_MAX characters (they are server data): results.json's, and the MIG instance. */
export interface GpuLabels extends GpuRowLabels {
  /** MIG: the GPU instance, when the exporter names one. */
  gpu_instance: string | null;
}

/** One GPU as one page showed it; a field is null when absent or nonsense. */
export interface DcgmGpuReading {
  /** `hostname/gpu[/GPU_I_ID]`: the GPU's key, unique on a page and across hosts. */
  id: string;
  labels: GpuLabels;
  power_w: number | null;
  util_pct: number | null;
  fb_used_mib: number | null;
  energy_mj: number | null;
}

/** A page's GPUs, and the values skipped as nonsense (each described, e.g. `DCGM_FI_DEV_POWER_USAGE -5 (gpu 0)`). */
export interface DcgmPage {
  gpus: DcgmGpuReading[];
  rejected: string[];
}

/** The shape of a parsed family this file reads (parse-prometheus-text-format's). */
interface Family {
  name: string;
  metrics: ReadonlyArray<{ value?: string; labels?: Record<string, string> }>;
}

const LABEL_MAX = 128;

/** A label's value, cut to LABEL_MAX characters; null when absent or empty. */
function bounded(value: string | undefined): string | null {
  if (value === undefined || value === '') return null;
  return value.length > LABEL_MAX ? `${value.slice(0, LABEL_MAX - 1)}…` : value;
}

function labelsOf(l: Record<string, string>): GpuLabels {
  return {
    // `Hostname` until dcgm-exporter's commit d5e5f51 (#655) renamed it `hostname`.
    hostname: bounded(l.hostname ?? l.Hostname),
    gpu: bounded(l.gpu),
    // `uuid` with --use-old-namespace.
    uuid: bounded(l.UUID ?? l.uuid),
    device: bounded(l.device),
    model_name: bounded(l.modelName),
    pod: bounded(l.pod ?? l.pod_name),
    namespace: bounded(l.namespace ?? l.pod_namespace),
    container: bounded(l.container ?? l.container_name),
    gpu_instance: bounded(l.GPU_I_ID),
  };
}

function idOf(labels: GpuLabels): string {
  const gpu = labels.gpu ?? labels.uuid ?? '?';
  return [labels.hostname, gpu, labels.gpu_instance].filter((part) => part !== null).join('/');
}

/**
 * The GPUs of a page with dcgm-exporter's names, or null when it shows none of the four fields. A GPU's series that
 * repeats (one per pod sharing it) is read once: the first, so power is not counted twice.
 */
export function readDcgm(families: readonly Family[]): DcgmPage | null {
  const byId = new Map<string, DcgmGpuReading>();
  const rejected: string[] = [];
  let any = false;
  for (const [field, name] of Object.entries(DCGM_FIELDS) as Array<[Field, string]>) {
    // Every group of the name: a page that concatenates hosts' pages repeats each family.
    const samples = families.filter((f) => f.name === name).flatMap((f) => f.metrics);
    if (samples.length === 0) continue;
    any = true;
    const seen = new Set<string>();
    for (const sample of samples) {
      const labels = labelsOf(sample.labels ?? {});
      const id = idOf(labels);
      if (seen.has(id)) continue;
      seen.add(id);
      let gpu = byId.get(id);
      if (gpu === undefined) byId.set(id, (gpu = { id, labels, power_w: null, util_pct: null, fb_used_mib: null, energy_mj: null }));
      const value = Number(sample.value);
      const [lo, hi] = RANGE[field];
      if (sample.value !== undefined && sample.value.trim() !== '' && Number.isFinite(value) && value >= lo && value <= hi) gpu[field] = value;
      else rejected.push(`${name} ${String(sample.value).slice(0, 24)} (gpu ${id})`);
    }
  }
  return any ? { gpus: [...byId.values()], rejected } : null;
}
