import type { GpuResults, GpuSample } from '../metrics/gpu-types.js';
import { lineChart, type SeriesPoint } from './charts.js';
import { chartFigure, escapeHtml, fmtNum, htmlTable } from './html-util.js';
import { counted } from '../util/plural.js';

/** Lines drawn per chart at most: the total and the first GPUs (a node of 8 fits). */
const MAX_GPU_LINES = 8;

/**
 * The report's "GPU power and energy" section (issue #32, part 5): the totals with tokens per joule, utilisation and
 * power over time (one line per GPU, and the sum of power), and one row per GPU. Empty without results.json `gpu`.
 * Labels are server data: every cell and series name is escaped (htmlTable, the charts).
 */
export function gpuHtml(gpu: GpuResults | null): string {
  if (gpu === null) return '';
  const t = gpu.total;
  const parts: string[] = [];
  const energy = t.energy_j === null ? 'unknown' : `${fmtNum(t.energy_j, 1)} J`;
  const how =
    t.energy_source === 'counter'
      ? "from each GPU's energy counter (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) between the scrape before and the one after the run"
      : t.energy_source === 'power_integral'
        ? `by integrating power (DCGM_FI_DEV_POWER_USAGE) over the scrapes, trapezoids, within ±${fmtNum(t.energy_error_bound_j, 1)} J if power moved monotonically between scrapes`
        : t.energy_source === 'mixed'
          ? 'from the energy counter where a GPU has one, else by integrating its power'
          : '';
  parts.push(
    `<p>${escapeHtml(counted(t.gpus, 'GPU'))}: energy <strong>${escapeHtml(energy)}</strong> over ${escapeHtml(fmtNum(t.window_s, 1))} s ${escapeHtml(how)}; ` +
      `mean power ${escapeHtml(fmtNum(t.mean_power_w, 1))} W, mean utilisation ${escapeHtml(fmtNum(t.mean_util_pct, 1))}%, busiest GPU's peak ${escapeHtml(fmtNum(t.max_util_pct, 1))}%; ` +
      `<strong>${escapeHtml(t.output_tokens_per_joule === null ? 'n/a' : t.output_tokens_per_joule.toPrecision(3))}</strong> output tokens per joule.</p>`,
  );
  if (gpu.partial || gpu.warnings.length > 0) {
    const head = gpu.partial ? '<strong>Partial:</strong> a GPU page missed the scrape before or after the run, so these figures cover less than the run and tokens per joule is not given.' : '<strong>GPU pages</strong>';
    parts.push(`<div class="banner">${head}<ul>${gpu.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul></div>`);
  }
  parts.push(`<div class="charts">\n${gpuCharts(gpu).join('\n')}\n</div>`);
  const head = ['GPU', 'model', 'UUID', 'pod', 'mean util %', 'max util %', 'mean W', 'max W', 'energy J', 'energy from', 'window s', 'partial'];
  const rows = gpu.gpus.map((g) => [g.id, g.model_name, g.uuid, g.pod === null ? null : `${g.namespace ?? ''}/${g.pod}`, g.mean_util_pct, g.max_util_pct, g.mean_power_w, g.max_power_w, g.energy_j, g.energy_source, g.window_s, g.partial ? 'yes' : 'no']);
  parts.push(htmlTable(head, rows));
  parts.push(`<p class="muted">Read from ${escapeHtml(gpu.pages.map((p) => `${p.url} (${p.scrapes} scrapes, ${p.failures} failed)`).join(', '))} every ${escapeHtml(fmtNum(gpu.scrape_interval_s))} s. Definitions: docs/METRICS.md, "GPU power and energy".</p>`);
  return parts.join('\n');
}

/** Utilisation and power over time, one line per GPU (and the total's power). */
function gpuCharts(gpu: GpuResults): string[] {
  const util: SeriesPoint[] = [];
  const power: SeriesPoint[] = [];
  const add = (series: string, samples: readonly GpuSample[], withUtil: boolean): void => {
    for (const s of samples) {
      if (withUtil && s.util_pct !== null) util.push({ x: s.t_s, y: s.util_pct, series });
      if (s.power_w !== null) power.push({ x: s.t_s, y: s.power_w, series });
    }
  };
  const sum = gpu.gpus.length > 1 ? ['all GPUs (sum)'] : [];
  if (sum.length > 0) add(sum[0]!, gpu.total.samples, false);
  const drawn = gpu.gpus.slice(0, MAX_GPU_LINES);
  for (const g of drawn) add(g.id, g.samples, true);
  // One order for both charts, so a GPU has the same colour in each (palette.ts).
  const seriesOrder = [...sum, ...drawn.map((g) => g.id)];
  const more = gpu.gpus.length > MAX_GPU_LINES ? ` The first ${MAX_GPU_LINES} of ${gpu.gpus.length} GPUs are drawn.` : '';
  const charts: string[] = [];
  if (util.length > 0) charts.push(chartFigure('gpu-util', 'GPU utilisation over time', lineChart(util, { xLabel: 'time since the first scrape (s)', yLabel: 'utilisation (%)', dots: util.length < 60, seriesOrder }), `DCGM_FI_DEV_GPU_UTIL at each scrape.${more}`));
  if (power.length > 0) charts.push(chartFigure('gpu-power', 'GPU power over time', lineChart(power, { xLabel: 'time since the first scrape (s)', yLabel: 'power (W)', dots: power.length < 60, seriesOrder }), `DCGM_FI_DEV_POWER_USAGE at each scrape.${more}`));
  return charts;
}
