// Benchmark: thousands of concurrent streaming requests against the simulator running in a worker thread (so the
// client load is on another event loop). Prints completions, wall time and the simulator's own event-loop delay p99
// (perf_hooks.monitorEventLoopDelay inside the simulator, read from its /metrics), against a 50-stream baseline run
// in the same process. Usage: node --import tsx bench/sim-concurrency.ts [streams=5000] [max_tokens=32]
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import Table from 'cli-table3';
import { Agent, request } from 'undici';
import { startSimulatorWorker } from '../src/sim/index.js';

const STREAMS = Number(process.argv[2] ?? 5000);
const MAX_TOKENS = Number(process.argv[3] ?? 32);
const DEADLINE_MS = 50_000;

interface Outcome {
  streams: number;
  completed: number;
  failed: number;
  wallMs: number;
  loopDelayP99Ms: number;
  tokensPerS: number;
}

async function run(streams: number, deadline: AbortSignal): Promise<Outcome> {
  // Every stream runs at once: the batch is as wide as the load, and KV has room for all of it.
  const sim = await startSimulatorWorker({
    profile: 'cpu-tiny',
    config: { max_num_seqs: 8192, max_num_batched_tokens: 262_144, num_gpu_blocks: 100_000 },
  });
  const agent = new Agent({ connections: streams, pipelining: 1, keepAliveTimeout: 30_000, connectTimeout: 30_000 });
  const scrapeLoopDelayMs = async (): Promise<number> => {
    const metrics = await request(`${sim.url}/metrics`, { dispatcher: agent });
    const text = await metrics.body.text();
    return Number(/^chatload_sim_event_loop_delay_p99_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
  };
  const send = async (i: number, signal: AbortSignal): Promise<boolean> => {
    const res = await request(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: `Stream ${i}: tell me a story about load testing.` }],
        max_tokens: MAX_TOKENS,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    let text = '';
    for await (const chunk of res.body) text += chunk.toString();
    return res.statusCode === 200 && text.endsWith('data: [DONE]\n\n');
  };
  try {
    // Warm the simulator's code paths (JIT), then scrape once: the gauge covers the interval since the previous
    // scrape, so the measured window is the load alone.
    for (let i = 0; i < 20; i++) await send(-1 - i, deadline);
    await scrapeLoopDelayMs();
    const started = performance.now();
    let completed = 0;
    let failed = 0;
    let tokens = 0;
    await Promise.all(
      Array.from({ length: streams }, async (_, i) => {
        try {
          if (await send(i, deadline)) {
            completed += 1;
            tokens += MAX_TOKENS;
          } else failed += 1;
        } catch {
          failed += 1;
        }
      }),
    );
    const wallMs = performance.now() - started;
    const loopDelayP99Ms = await scrapeLoopDelayMs();
    return { streams, completed, failed, wallMs, loopDelayP99Ms, tokensPerS: tokens / (wallMs / 1000) };
  } finally {
    await agent.close();
    await sim.close();
  }
}

const deadline = AbortSignal.timeout(DEADLINE_MS);
setMaxListeners(0, deadline); // one listener per in-flight request
const baseline = await run(50, deadline);
const load = await run(STREAMS, deadline);
const table = new Table({ head: ['streams', 'completed', 'failed', 'wall s', 'sim loop delay p99 ms', 'tokens/s'], style: { head: [], border: [] } });
for (const o of [baseline, load]) {
  table.push([o.streams, o.completed, o.failed, (o.wallMs / 1000).toFixed(2), o.loopDelayP99Ms.toFixed(1), Math.round(o.tokensPerS)]);
}
console.log(table.toString());
console.log(
  `loop delay p99 at ${STREAMS} streams is ${(load.loopDelayP99Ms / baseline.loopDelayP99Ms).toFixed(1)}x the 50-stream baseline; ` +
    `${load.completed}/${STREAMS} completed`,
);
if (load.completed !== STREAMS) process.exitCode = 1;
