// What the stale-connection resend costs (issue #12): sequential streamed requests (-p 1, no think time) against a
// llama-server-like raw server that closes every connection 0.3 ms after its stream, against the same server keeping
// connections alive, measured in one run in alternating rounds. Reports the TTFT and wall-time-per-request ratios
// (closing / keep-alive) and the resends. `node --import tsx bench/stale-connections.ts [requests]`
import { ChatClient } from '../src/client/chat-client.js';
import { startCloseAfterStreamServer } from '../test/helpers/close-after-stream-server.js';

const REQUESTS = Number(process.argv[2] ?? 400);
const ROUNDS = 3;

interface Round {
  ttftMedianMs: number;
  wallPerRequestMs: number;
  failed: number;
  resends: number;
}

async function round(finDelayMs: number | undefined): Promise<Round> {
  // finDelayMs undefined: the same server keeping every connection open.
  const server = await startCloseAfterStreamServer(finDelayMs === undefined ? { keepAlive: true, tokens: 8 } : { finDelayMs, tokens: 8 });
  const client = new ChatClient({ baseUrl: server.url, connections: 1, requestTimeoutMs: 10_000 });
  const ttfts: number[] = [];
  let failed = 0;
  const startMs = performance.now();
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const result = await client.send({ model: 'raw-model', messages: [{ role: 'user', content: `hello ${i}` }], stream: true });
      if (result.error !== undefined || result.firstTokenAtMs === undefined) failed += 1;
      else ttfts.push(result.firstTokenAtMs - result.sentAtMs);
    }
  } finally {
    await client.close();
    await server.close();
  }
  const wallMs = performance.now() - startMs;
  ttfts.sort((a, b) => a - b);
  return {
    ttftMedianMs: ttfts[Math.floor(ttfts.length / 2)] ?? Number.NaN,
    wallPerRequestMs: wallMs / REQUESTS,
    failed,
    resends: client.connectionReuse.staleConnectionResends,
  };
}

const closing: Round[] = [];
const keepAlive: Round[] = [];
for (let i = 0; i < ROUNDS; i++) {
  keepAlive.push(await round(undefined));
  closing.push(await round(0.3));
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (x: number): string => x.toFixed(3);
console.log(`${REQUESTS} sequential streamed requests per round, ${ROUNDS} alternating rounds (medians over rounds)`);
console.log('server                         ttft p50 ms   wall/request ms   failed   stale resends');
for (const [name, rounds] of [['keeps connections', keepAlive], ['closes 0.3 ms after stream', closing]] as const) {
  console.log(
    `${name.padEnd(30)} ${fmt(median(rounds.map((r) => r.ttftMedianMs))).padStart(11)}   ${fmt(median(rounds.map((r) => r.wallPerRequestMs))).padStart(15)}   ` +
      `${String(rounds.reduce((s, r) => s + r.failed, 0)).padStart(6)}   ${rounds.map((r) => r.resends).join('/')}`,
  );
}
console.log(
  `ratio closing/keep-alive: ttft p50 ${(median(closing.map((r) => r.ttftMedianMs)) / median(keepAlive.map((r) => r.ttftMedianMs))).toFixed(2)}x, ` +
    `wall per request ${(median(closing.map((r) => r.wallPerRequestMs)) / median(keepAlive.map((r) => r.wallPerRequestMs))).toFixed(2)}x`,
);
