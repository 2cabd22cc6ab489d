// Local Hugging Face datasets replayed (issue #36, part 4): a Parquet file and a `datasets` save_to_disk folder (Arrow
// stream files, dataset_info.json, state.json) run against the simulator over loopback. A recording proxy in front
// of the simulator keeps each request body, so the test sees the datasets' text reach the server: every user message
// of the dataset is in the body of a request, every request completes.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { ALPACA, HF_FIXTURES, SAVED_TRAIN } from '../helpers/hf-fixtures.js';
import { tempDir } from '../helpers/tmp.js';

/** A loopback proxy to `target` that records every request's body. */
async function recordingProxy(target: URL): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) bodies.push(body.toString('utf8'));
      const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server };
}

/** The text of every message of every chat request body. */
function sentContents(bodies: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const body of bodies) {
    const parsed = JSON.parse(body) as { messages?: { content?: unknown }[] };
    for (const m of parsed.messages ?? []) if (typeof m.content === 'string') out.add(m.content);
  }
  return out;
}

describe('Hugging Face datasets replayed against the simulator', () => {
  let sim: RunningSimulator;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  before(async () => {
    sim = await startSimulator({ profile: 'cpu-tiny' });
    proxy = await recordingProxy(new URL(sim.url));
  });
  after(async () => {
    proxy.server.closeAllConnections();
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await sim.close();
  });

  const cases = [
    { name: 'a Parquet file (Alpaca layout, three row groups)', inputFile: join(HF_FIXTURES, 'alpaca.parquet'), users: ALPACA.instruction.map((t, i) => (ALPACA.input[i] ? `${t}\n\n${ALPACA.input[i]}` : t)) },
    {
      name: 'a save_to_disk DatasetDict folder (Arrow stream shards, messages layout)',
      inputFile: join(HF_FIXTURES, 'saved'),
      users: SAVED_TRAIN.flatMap((c) => c.messages.filter((m) => m.role === 'user').map((m) => m.content)),
    },
  ];
  for (const c of cases) {
    test(`${c.name}: every request completes and carries the dataset's text`, { timeout: 60_000 }, async () => {
      proxy.bodies.length = 0;
      const result = await runBenchmark({ url: proxy.url, inputFile: c.inputFile, numClients: 2, outputDir: tempDir('hf-replay') });
      const records = readRequestsJsonl(result.files.requests);
      assert.equal(records.length, c.users.length);
      assert.ok(records.every((r) => r.status === 'ok'), records.map((r) => r.error).join('; '));
      const sent = sentContents(proxy.bodies.filter((b) => b.includes('"messages"')));
      for (const user of c.users) assert.ok(sent.has(user), `not sent: ${JSON.stringify(user)}`);
    });
  }
});
