import type { GpuResults } from '../metrics/gpu-types.js';
import { counted } from '../util/plural.js';

/**
 * The terminal's GPU line, next to throughput: energy over the run, mean power, mean utilisation and output tokens per
 * joule, from a dcgm-exporter page (results.json `gpu`). Numbers only: no label of the page reaches the terminal here.
 * e.g. `2 GPUs: energy 1203.4 J (energy counter) over 2.0 s | mean power 600.0 W | mean util 47.5% | 0.052 output tokens/J`
 */
export function gpuLine(gpu: GpuResults): string {
  const t = gpu.total;
  const num = (x: number | null, digits: number, unit: string): string => (x === null ? 'n/a' : `${x.toFixed(digits)}${unit}`);
  const source = t.energy_source === 'counter' ? 'energy counter' : t.energy_source === 'power_integral' ? `power integrated, ±${num(t.energy_error_bound_j, 1, ' J')}` : t.energy_source === 'mixed' ? 'counter and integrated power' : '';
  const energy = t.energy_j === null ? 'energy n/a' : `energy ${num(t.energy_j, 1, ' J')} (${source}) over ${num(t.window_s, 1, ' s')}`;
  const perJoule = t.output_tokens_per_joule === null ? 'tokens/J n/a' : `${t.output_tokens_per_joule.toPrecision(3)} output tokens/J`;
  const partial = gpu.partial ? ' | PARTIAL: a GPU page missed the scrape before or after the run (see warnings)' : '';
  return `${counted(t.gpus, 'GPU')}: ${energy} | mean power ${num(t.mean_power_w, 1, ' W')} | mean util ${num(t.mean_util_pct, 1, '%')} | ${perJoule}${partial}`;
}
