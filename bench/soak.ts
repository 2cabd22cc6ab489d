// Soak: a long closed-loop run at high concurrency against `chatload serve` (its own process, so the memory sampled
// here is the client's alone), sampling this process's RSS and heap (after a forced GC) every few seconds. Prints
// the samples, start against end, and the heap slope per minute and per request.
//
//   node --import tsx bench/soak.ts [--minutes 10] [--clients 256] [--rate 2] [--sample-sec 5]
//
// --rate is requests/s per client (Poisson), so the run is a steady load rather than a flat-out race; the dataset is
// sized to last the whole run. Bounded: the run has --duration = minutes, and --benchmark-timeout-sec a minute more.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runBenchmark } from '../src/benchmark/run-benchmark.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const minutes = flag('minutes', 10);
const clients = Math.round(flag('clients', 256));
const ratePerClient = flag('rate', 2);
const sampleSec = flag('sample-sec', 5);
const durationSec = minutes * 60;

// A GC before each sample, so the heap figure is live data, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Starts `chatload serve` and resolves with its URL and a kill function. */
async function startServer(configPath: string): Promise<{ url: string; kill: () => void }> {
  const entry = fileURLToPath(new URL('../src/cli/entry.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', entry, 'serve', '--port', '0', '--profile', 'cpu-tiny', '--config', configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`chatload serve did not start: ${out}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`chatload serve exited with ${code}: ${out}`)));
  });
  child.stdout.resume();
  return { url, kill: () => child.kill('SIGKILL') };
}

interface Sample {
  atSec: number;
  requests: number;
  rssMb: number;
  heapMb: number;
}

function leastSquaresSlope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const dir = mkdtempSync(join(tmpdir(), 'chatload-soak-'));
const configPath = join(dir, 'sim.json');
writeFileSync(configPath, JSON.stringify({ max_num_seqs: 512 }));
// Enough conversations of 10 user turns for the whole run at the target rate, with 50% to spare.
const turns = 10;
const conversations = Math.ceil((clients * ratePerClient * durationSec * 1.5) / turns) + clients;
const input = join(dir, 'in.jsonl');
const lines: string[] = [];
for (let c = 0; c < conversations; c++) {
  const messages = [];
  for (let t = 0; t < turns; t++) messages.push({ role: 'user', content: `c${c} t${t} tell me more` }, { role: 'assistant', content: 'one two three four five six seven eight' });
  lines.push(JSON.stringify({ id: `c${c}`, messages }));
}
writeFileSync(input, `${lines.join('\n')}\n`);
lines.length = 0;

const server = await startServer(configPath);
const samples: Sample[] = [];
let requests = 0;
const startedMs = performance.now();
const sample = (): void => {
  gc();
  const memory = process.memoryUsage();
  samples.push({ atSec: (performance.now() - startedMs) / 1000, requests, rssMb: memory.rss / 2 ** 20, heapMb: memory.heapUsed / 2 ** 20 });
};
const sampler = setInterval(sample, sampleSec * 1000);
let failed = 0;
try {
  console.log(`soak: ${minutes} min, ${clients} clients at ${ratePerClient} req/s each, ${conversations} conversations, server ${server.url}`);
  const result = await runBenchmark(
    {
      url: server.url,
      inputFile: input,
      outputDir: join(dir, 'out'),
      numClients: clients,
      maxActiveConversations: clients,
      earlyStop: false,
      requestRate: ratePerClient,
      durationSec,
      benchmarkTimeoutSec: durationSec + 60,
      requestTimeoutSec: 30,
      report: false,
      workers: 1,
      maxErrorRate: 1,
    },
    { observer: { onRecord: () => void (requests += 1) } },
  );
  failed = result.summary.failed;
} finally {
  clearInterval(sampler);
  server.kill();
}
sample();
// The last sample is taken after runBenchmark returned (its records and pools released): shown, not in the slope.
const after = samples.pop()!;

// Skip the first 20% (or 15 s): the dataset load, JIT and pools settle then.
const warmSec = Math.max(15, durationSec * 0.2);
const steady = samples.filter((s) => s.atSec >= warmSec);
const first = steady[0] ?? samples[0]!;
const last = samples.at(-1)!;
const heapSlopePerMin = leastSquaresSlope(steady.map((s) => s.atSec / 60), steady.map((s) => s.heapMb));
const rssSlopePerMin = leastSquaresSlope(steady.map((s) => s.atSec / 60), steady.map((s) => s.rssMb));
const heapPerRequestBytes = leastSquaresSlope(steady.map((s) => s.requests), steady.map((s) => s.heapMb * 2 ** 20));

const every = Math.max(1, Math.floor(samples.length / 12));
console.log('\n   t (s)   requests   rss MB   heap MB');
for (const s of samples.filter((_, i) => i % every === 0 || i === samples.length - 1)) {
  console.log(`${s.atSec.toFixed(0).padStart(8)} ${String(s.requests).padStart(10)} ${s.rssMb.toFixed(1).padStart(8)} ${s.heapMb.toFixed(1).padStart(9)}`);
}
console.log(`   after ${String(after.requests).padStart(10)} ${after.rssMb.toFixed(1).padStart(8)} ${after.heapMb.toFixed(1).padStart(9)}   (runBenchmark returned)`);
console.log(`\nrequests ${requests} (${failed} failed), ${(requests / (last.atSec || 1)).toFixed(0)} req/s`);
console.log(`steady state from t=${first.atSec.toFixed(0)} s: rss ${first.rssMb.toFixed(1)} → ${last.rssMb.toFixed(1)} MB (×${(last.rssMb / first.rssMb).toFixed(2)}), heap ${first.heapMb.toFixed(1)} → ${last.heapMb.toFixed(1)} MB (×${(last.heapMb / first.heapMb).toFixed(2)})`);
console.log(`slope: heap ${heapSlopePerMin.toFixed(2)} MB/min, rss ${rssSlopePerMin.toFixed(2)} MB/min; heap ${heapPerRequestBytes.toFixed(0)} bytes per request`);
rmSync(dir, { recursive: true, force: true });
