// `npm run bench`: runs every benchmark in bench/, one after another, each in its own process (so one's load and
// memory do not colour the next), and prints their tables. Each benchmark bounds its own time.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches = ['client-sse.ts', 'read-floor.ts', 'endpoint-readers.ts', 'sim-concurrency.ts', 'request-rate.ts', 'generate.ts', 'stale-connections.ts', 'abort-listeners.ts', 'fixed-timing.ts', 'startup.ts', 'node-flags.ts', 'approx-tokenizer.ts', 'trace-replay.ts', 'live-panel.ts', 'expected-cache.ts', 'global-cache-model.ts', 'llamacpp-slots.ts', 'server-tokenize.ts', 'long-context.ts', 'metrics-port.ts'];
let failed = 0;
for (const name of benches) {
  console.log(`\n=== bench/${name}`);
  const file = fileURLToPath(new URL(name, import.meta.url));
  const run = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit', timeout: 300_000 });
  if (run.status !== 0) {
    failed += 1;
    console.log(`bench/${name} failed (exit ${run.status ?? run.signal})`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
