// GPU power and energy from NVIDIA dcgm-exporter (issue #32, part 5): a real run against the simulator with two
// --scrape-metrics pages, the simulator's /metrics and a 2-GPU exporter page (test/helpers/dcgm-exporter-server.ts),
// over loopback HTTP. The exporter's power and energy counter change in a known way, so energy and tokens per joule
// are checked against the truth of the pages it served.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runBenchmark, type BenchmarkResult } from '../../src/benchmark/run-benchmark.js';
import type { GpuResults } from '../../src/metrics/gpu-types.js';
import { formatSummary } from '../../src/report/terminal.js';
import { gpuHtml } from '../../src/report/gpu-html.js';
import { RunAggregate } from '../../src/metrics/run-aggregate.js';
import { gpuResults } from '../../src/server-metrics/gpu-figures.js';
import { GpuPageLog } from '../../src/server-metrics/gpu-log.js';
import { readServerMetrics } from '../../src/server-metrics/parse.js';
import { startSimulator } from '../../src/sim/index.js';
import { startDcgmExporter, type DcgmExporter, type DcgmExporterOptions } from '../helpers/dcgm-exporter-server.js';
import { repoPath } from '../helpers/repo.js';
import { tempDir } from '../helpers/tmp.js';

const POWER_W = 300;

/** Equal but for floating-point rounding (a time-weighted mean of a constant is that constant). */
function near(actual: number | null, expected: number, what: string): void {
  assert.ok(actual !== null && Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);
}

/** The summary of a run with no request, for the terminal's header. */
function emptySummary() {
  return new RunAggregate().summary();
}

/** A run of ~1.2 s against the simulator, scraping its /metrics and the exporter every 0.2 s. */
async function runWithExporter(label: string, options: DcgmExporterOptions): Promise<{ result: BenchmarkResult; exporter: DcgmExporter; doc: Record<string, unknown>; dir: string }> {
  const sim = await startSimulator({ profile: 'cpu-tiny' });
  const exporter = await startDcgmExporter(options);
  const dir = tempDir(`gpu-${label}`);
  try {
    const result = await runBenchmark({ url: sim.url, numClients: 2, durationSec: 1.2, outputDir: dir, scrapeMetrics: [`${sim.url}/metrics`, exporter.url], scrapeIntervalSec: 0.2, earlyStop: false });
    const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Record<string, unknown>;
    return { result, exporter, doc, dir };
  } finally {
    await exporter.close();
    await sim.close();
  }
}

/** Joules between two pages the exporter served, by its counters: the truth. */
function servedJoules(exporter: DcgmExporter, gpu: 0 | 1, first: number, last: number): number {
  return (exporter.served[last]!.energyMj[gpu] - exporter.served[first]!.energyMj[gpu]) / 1000;
}

describe('GPU power and energy from a dcgm-exporter page', { timeout: 120_000 }, () => {
  test('the recorded page is read: 2 GPUs by host and index, their labels, power, utilisation, framebuffer and energy', () => {
    const page = readFileSync(repoPath('test', 'fixtures', 'dcgm-exporter-2gpu.prom'), 'utf8');
    const reading = readServerMetrics(page);
    assert.equal(reading.generation_tokens, null, 'no engine counter on a GPU page');
    const gpus = reading.gpu!.gpus;
    assert.deepEqual(gpus.map((g) => g.id), ['gpu-node-a/0', 'gpu-node-a/1']);
    assert.deepEqual(gpus[0]!.labels, {
      hostname: 'gpu-node-a',
      gpu: '0',
      uuid: 'GPU-1d5f4e3a-7c2b-4e59-9a1d-3b8e6f0c2d41',
      device: 'nvidia0',
      model_name: 'NVIDIA H100 80GB HBM3',
      pod: 'vllm-qwen-7d9c5b6f4-x2kqp',
      namespace: 'llm',
      container: 'vllm',
      gpu_instance: null,
    });
    assert.deepEqual([gpus[0]!.power_w, gpus[0]!.util_pct, gpus[0]!.fb_used_mib, gpus[0]!.energy_mj], [300, 87, 75698, 7263716283]);
    // Another host's page with the same GPU indexes: kept apart by hostname (the label's name since dcgm-exporter #655).
    const other = readServerMetrics(page.replace(/Hostname="gpu-node-a"/g, 'hostname="gpu-node-b"'));
    assert.deepEqual(other.gpu!.gpus.map((g) => g.id), ['gpu-node-b/0', 'gpu-node-b/1']);
    // One page of two hosts (a federating exporter), each with its GPU 0 and 1: four GPUs, none merged.
    const twoHosts = readServerMetrics(`${page}\n${page.replace(/Hostname="gpu-node-a"/g, 'hostname="gpu-node-b"').replace(/^# (HELP|TYPE).*\n/gm, '')}`);
    assert.deepEqual(twoHosts.gpu!.gpus.map((g) => g.id).sort(), ['gpu-node-a/0', 'gpu-node-a/1', 'gpu-node-b/0', 'gpu-node-b/1']);
  });

  test('labels are server data: bounded when read, escaped in the HTML, kept off the terminal line', () => {
    const page = readFileSync(repoPath('test', 'fixtures', 'dcgm-exporter-2gpu.prom'), 'utf8');
    const hostile = `<img src=x onerror=alert(1)>\u001b]0;pwned\u0007${'h'.repeat(300)}`;
    const reading = readServerMetrics(page.replace(/Hostname="gpu-node-a"/g, `Hostname="${hostile}"`));
    const labels = reading.gpu!.gpus[0]!.labels;
    assert.equal(labels.hostname!.length, 128);
    const log = new GpuPageLog('http://127.0.0.1:1/metrics');
    log.add(reading.gpu!, 0, 'before', 0);
    log.add(reading.gpu!, 1, 'after', 1000);
    const gpu = gpuResults([{ log, scrapes: 2, failures: 0, lastError: null }], 1000, 10)!;
    const html = gpuHtml(gpu);
    assert.ok(!html.includes('<img'), 'the label is escaped in the HTML');
    assert.match(html, /&lt;img src=x/);
    const text = formatSummary({ summary: emptySummary(), perTurn: [], clientHealth: null, gpu }, { color: false });
    assert.ok(!text.includes('img') && !text.includes('\u001b]0'), 'no label on the terminal line');
  });

  test('a page with utilisation only: no energy and no tokens per joule, but not partial and no warning', () => {
    const page = '# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 50\n';
    const log = new GpuPageLog('http://127.0.0.1:1/metrics');
    for (const [tick, phase] of [[0, 'before'], [1, 'during'], [2, 'after']] as const) log.add(readServerMetrics(page).gpu!, tick, phase, tick * 1000);
    const r = gpuResults([{ log, scrapes: 3, failures: 0, lastError: null }], 1000, 100)!;
    assert.equal(r.gpus[0]!.id, '0');
    assert.deepEqual([r.total.energy_j, r.total.energy_source, r.total.output_tokens_per_joule, r.partial, r.total.window_s, r.total.mean_util_pct], [null, null, null, false, 2, 50]);
    assert.deepEqual(r.warnings, []);
  });

  test('power integrated by trapezoids: a step between two scrapes is within its bound, gap × |ΔP| / 2', () => {
    const log = new GpuPageLog('http://127.0.0.1:1/metrics');
    const gpu = (power: number) => ({ gpus: [{ id: '0', labels: { hostname: null, gpu: '0', uuid: null, device: null, model_name: null, pod: null, namespace: null, container: null, gpu_instance: null }, power_w: power, util_pct: 50, fb_used_mib: 1, energy_mj: null }], rejected: [] });
    log.add(gpu(100), 0, 'before', 1000);
    log.add(gpu(100), 1, 'during', 2000);
    log.add(gpu(300), 2, 'during', 3000); // power stepped from 100 to 300 W somewhere in (2 s, 3 s)
    log.add(gpu(300), 3, 'after', 4000);
    const r = gpuResults([{ log, scrapes: 4, failures: 0, lastError: null }], 1000, 1000)!;
    const g = r.gpus[0]!;
    assert.equal(g.energy_source, 'power_integral');
    assert.equal(g.energy_j, 100 + 200 + 300);
    assert.equal(g.energy_error_bound_j, (1 * 200) / 2);
    // Every true step time in the gap gives 100 + [100, 300] + 300 J: the bound holds at both ends.
    for (const truth of [500, 700]) assert.ok(Math.abs(g.energy_j! - truth) <= g.energy_error_bound_j!);
    assert.equal(r.total.output_tokens_per_joule, 1000 / 600);
    // A resumed run (its tokens include the interrupted run's): the energy stands, no tokens per joule, said.
    const resumed = gpuResults([{ log, scrapes: 4, failures: 0, lastError: null }], 1000, null)!;
    assert.equal(resumed.total.energy_j, 600);
    assert.equal(resumed.total.output_tokens_per_joule, null);
    assert.match(resumed.warnings.join('\n'), /resumed run.*no tokens per joule/);
  });

  test('two --scrape-metrics, the simulator and the exporter: energy from the counters, tokens per joule, report and terminal', async () => {
    const { result, exporter, doc, dir } = await runWithExporter('counter', { powerW: POWER_W });
    const gpu = result.gpu!;
    assert.ok(gpu !== null, 'the GPU page was recognised');
    assert.equal(result.exitCode, 0);
    assert.deepEqual(gpu.gpus.map((g) => g.id), ['gpu-node-a/0', 'gpu-node-a/1']);
    const last = exporter.served.length - 1;
    assert.ok(last >= 2, `the exporter was scraped before, during and after the run (${exporter.served.length} pages)`);
    for (const i of [0, 1] as const) {
      const g = gpu.gpus[i]!;
      assert.equal(g.energy_source, 'counter');
      // The first page served is the scrape before the run, the last the one after: the counter's delta between them.
      assert.equal(g.energy_j, servedJoules(exporter, i, 0, last));
      assert.equal(g.partial, false);
      assert.equal(g.samples.length, exporter.served.length);
    }
    const t = gpu.total;
    assert.equal(t.energy_j, servedJoules(exporter, 0, 0, last) + servedJoules(exporter, 1, 0, last));
    // 300 W per GPU over the exporter's own window between the two pages: 600 J a second, to the mJ.
    const serverWindowS = (exporter.served[last]!.atMs - exporter.served[0]!.atMs) / 1000;
    assert.ok(Math.abs(t.energy_j! - 2 * POWER_W * serverWindowS) <= 0.002, `${t.energy_j} J against 600 W × ${serverWindowS} s`);
    assert.ok(result.summary.total_output_tokens > 0);
    assert.equal(t.output_tokens_per_joule, result.summary.total_output_tokens / t.energy_j!);
    // The window runs from the scrape before the run to the one after it: it holds the whole run.
    assert.ok(t.window_s! >= result.summary.runtime_sec, `window ${t.window_s} s, run ${result.summary.runtime_sec} s`);
    near(t.mean_util_pct, 60, 'mean util');
    assert.equal(t.max_util_pct, 80);
    assert.ok(t.samples.every((s) => s.gpus !== 2 || s.power_w === 2 * POWER_W));
    assert.equal(gpu.partial, false);
    assert.deepEqual(gpu.warnings, []);
    // The GPU page is no replica, and says nothing about engine counters.
    assert.equal(result.replicas, null);
    assert.ok(!result.warnings.some((w) => w.includes(exporter.url)), result.warnings.join('\n'));
    // results.json holds the section as the run returned it; the HTML report draws it; the terminal says it.
    assert.deepEqual(doc.gpu, JSON.parse(JSON.stringify(gpu)) as GpuResults);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    assert.match(html, /GPU power and energy/);
    assert.match(html, /data-chart="gpu-power"/);
    assert.match(html, /data-chart="gpu-util"/);
    const text = formatSummary({ summary: result.summary, perTurn: [], clientHealth: null, gpu }, { color: false });
    assert.match(text, /gpu +2 GPUs: energy [\d.]+ J \(energy counter\) over [\d.]+ s \| mean power [\d.]+ W \| mean util 60\.0% \| [\d.e+-]+ output tokens\/J/);
  });

  test('without the energy counter: power integrated over the scrapes, exact for a constant power', async () => {
    const { result } = await runWithExporter('integral', { powerW: POWER_W, energyCounter: false });
    const t = result.gpu!.total;
    assert.equal(t.energy_source, 'power_integral');
    assert.equal(t.energy_error_bound_j, 0, 'constant power: no step to miss');
    assert.ok(Math.abs(t.energy_j! - 2 * POWER_W * t.window_s!) < 1e-6, `${t.energy_j} J against 600 W × ${t.window_s} s`);
    near(t.mean_power_w, 2 * POWER_W, 'mean power');
    assert.equal(t.output_tokens_per_joule, result.summary.total_output_tokens / t.energy_j!);
  });

  test('the exporter disappears mid-run: a warning, partial figures over the pages it served, no tokens per joule', async () => {
    const { result, exporter } = await runWithExporter('down', { powerW: POWER_W, downAfter: 3 });
    assert.equal(exporter.served.length, 3);
    assert.equal(result.exitCode, 0, 'a GPU page going down never fails the run');
    const gpu = result.gpu!;
    assert.equal(gpu.partial, true);
    for (const i of [0, 1] as const) {
      const g = gpu.gpus[i]!;
      assert.equal(g.partial, true);
      // What the pages it served say, and nothing past them.
      assert.equal(g.energy_j, servedJoules(exporter, i, 0, 2));
      assert.equal(g.samples.length, 3);
    }
    assert.equal(gpu.total.output_tokens_per_joule, null);
    assert.ok(gpu.total.window_s! < result.summary.runtime_sec + 1);
    const warning = result.warnings.find((w) => w.includes(exporter.url));
    assert.match(warning ?? '', /failed \d+ of \d+ scrapes .*marked partial; no tokens per joule/);
    assert.match(formatSummary({ summary: result.summary, perTurn: [], clientHealth: null, gpu }, { color: false }), /tokens\/J n\/a \| PARTIAL/);
  });

  test('nonsense values (a negative power, a NaN utilisation) are skipped with a warning, never averaged in', async () => {
    const { result, exporter } = await runWithExporter('nonsense', { powerW: POWER_W, nonsense: true });
    const gpu = result.gpu!;
    const g1 = gpu.gpus[1]!;
    assert.ok(g1.samples.some((s) => s.power_w === null && s.util_pct === null), 'the nonsense scrape is kept, without its values');
    assert.ok(g1.samples.every((s) => s.power_w === null || s.power_w === POWER_W));
    assert.equal(g1.max_power_w, POWER_W);
    // At a tick where GPU 1's power was nonsense the total has no power: half the GPUs is not the total.
    const total = gpu.total.samples;
    assert.ok(total.some((s) => s.power_w === null) && total.every((s) => s.power_w === null || s.power_w === 2 * POWER_W));
    near(g1.mean_util_pct, 40, 'mean util of GPU 1');
    // The energy counter was sane on every page: the energy is still the truth.
    assert.equal(g1.energy_j, servedJoules(exporter, 1, 0, exporter.served.length - 1));
    const warning = result.warnings.find((w) => w.includes('out of range'));
    assert.match(warning ?? '', /DCGM_FI_DEV_POWER_USAGE -12\.000000 \(gpu gpu-node-a\/1\)/);
    assert.match(warning ?? '', /DCGM_FI_DEV_GPU_UTIL NaN/);
  });
});
