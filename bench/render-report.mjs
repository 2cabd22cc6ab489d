// The report-rendering probe of bench/startup.ts: in a fresh process, times (CPU, process.cpuUsage) loading a run's
// files, importing the HTML renderer (its chart writer and d3-scale, loaded on first use), its first render (cold:
// V8 has compiled nothing of it yet), and the median of 5 more (warm). Prints one JSON line. Plain JS on dist/, so
// no tsx loader runs beside what is measured.
//
//   node bench/render-report.mjs RESULTS_DIR [MODULES] [--as-run]
//
// MODULES: a folder with html.js and run-data.js (bench/startup.ts bundles them as the package's bundle is built);
// without it, tsc's unbundled dist/report/html.js and dist/store/run-data.js.
// --as-run: first (untimed) load what `chatload run` has loaded when it writes the report, the run command's module
// (MODULES/run-command.js, or dist/cli/run.js): the option table and zod with it, which the renderer imports too, so
// the import figure is then what the end of a run pays, not also code the run loaded at its start.
import { existsSync } from 'node:fs';
import { pathToFileURL, URL } from 'node:url';

const asRun = process.argv.includes('--as-run');
const [, , dir, modules] = process.argv.filter((a) => a !== '--as-run');
const htmlUrl = modules ? pathToFileURL(`${modules}/html.js`).href : new URL('../dist/report/html.js', import.meta.url).href;
const runDataUrl = modules ? pathToFileURL(`${modules}/run-data.js`).href : new URL('../dist/store/run-data.js', import.meta.url).href;
if (asRun) {
  const runCommand = modules ? `${modules}/run-command.js` : new URL('../dist/cli/run.js', import.meta.url).pathname;
  if (!existsSync(runCommand)) throw new Error(`--as-run: ${runCommand} is missing`);
  await import(pathToFileURL(runCommand).href);
}
const { loadRunData } = await import(runDataUrl);

/** CPU milliseconds (user + system) that `fn` took in this process. */
async function cpuMs(fn) {
  const before = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, value };
}

const load = await cpuMs(() => loadRunData(dir));
const data = load.value;
const imported = await cpuMs(() => import(htmlUrl));
const { renderHtmlReport } = imported.value;
const cold = await cpuMs(() => renderHtmlReport(data));
const warm = [];
for (let i = 0; i < 5; i++) warm.push((await cpuMs(() => renderHtmlReport(data))).ms);
warm.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({ records: data.records.length, htmlBytes: cold.value.length, loadMs: load.ms, importMs: imported.ms, coldMs: cold.ms, warmMs: warm[2] })}\n`,
);
