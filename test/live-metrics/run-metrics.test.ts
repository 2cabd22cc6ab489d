// The run's live Prometheus metrics (issue #32, part 3): what each record moves, the labels of a sweep's points and
// repetitions, and the server's port check and close, over real loopback HTTP.
import assert from 'node:assert/strict';
import { createServer, get, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import { LiveMetrics, serveLiveMetrics } from '../../src/live-metrics/index.js';
import { makeFailed, makeRecord } from '../metrics/record-fixtures.js';

/** The value of the one sample line `name{labels}` in `text`, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const RUN = 'point="run",repetition="1"';

describe('LiveMetrics', () => {
  test('counts completed and failed requests, observes the latencies, leaves warmup out', async () => {
    const metrics = new LiveMetrics();
    try {
      metrics.onSend();
      metrics.onSend();
      metrics.onSend();
      metrics.onSend();
      metrics.onRecord(makeRecord({ ttft_ms: 30, tpot_ms: 4, e2el_ms: 700, schedule_lag_ms: 2, input_num_tokens: 100, cached_tokens: 60, expected_cached_tokens: 80 }));
      metrics.onRecord(makeFailed('timeout_ttft'));
      metrics.onRecord(makeRecord({ warmup: true, ttft_ms: 5000 }));
      const text = await metrics.render();
      assert.equal(sample(text, 'chatload_requests_completed_total', RUN), 1);
      assert.equal(sample(text, 'chatload_requests_failed_total', `${RUN},kind="timeout_ttft"`), 1);
      assert.equal(sample(text, 'chatload_warmup_requests_total', RUN), 1);
      // The warmup request's 5 s TTFT is in no bucket: one observation, 30 ms, in the 0.04 bucket and not the 0.02.
      assert.equal(sample(text, 'chatload_ttft_seconds_count', RUN), 1);
      assert.equal(sample(text, 'chatload_ttft_seconds_bucket', `le="0.04",${RUN}`), 1);
      assert.equal(sample(text, 'chatload_ttft_seconds_bucket', `le="0.02",${RUN}`), 0);
      assert.equal(sample(text, 'chatload_tpot_seconds_sum', RUN), 0.004);
      assert.equal(sample(text, 'chatload_e2el_seconds_sum', RUN), 0.7);
      assert.equal(sample(text, 'chatload_schedule_lag_seconds_sum', RUN), 0.002);
      assert.equal(sample(text, 'chatload_requests_in_flight', RUN), 1, '4 sent, 3 ended');
      assert.equal(sample(text, 'chatload_cache_hit_ratio', RUN), 0.6);
      assert.equal(sample(text, 'chatload_cache_expected_hit_ratio', RUN), 0.8);
      assert.ok(sample(text, 'chatload_client_event_loop_delay_seconds', 'quantile="0.99"')! >= 0);
    } finally {
      metrics.close();
    }
  });

  test('no cache ratio while no server reported cached tokens', async () => {
    const metrics = new LiveMetrics();
    try {
      metrics.onRecord(makeRecord({ cached_tokens: null, expected_cached_tokens: 50 }));
      const text = await metrics.render();
      assert.equal(sample(text, 'chatload_cache_hit_ratio', RUN), undefined);
      assert.equal(sample(text, 'chatload_cache_expected_hit_ratio', RUN), 0.5);
    } finally {
      metrics.close();
    }
  });

  test("each run (a sweep's point, a repetition) has its own series, present at 0 from its start", async () => {
    const metrics = new LiveMetrics({ point: 'concurrency=1', repetition: '1' });
    try {
      metrics.onRecord(makeRecord());
      metrics.setRun({ point: 'concurrency=2', repetition: '1' });
      metrics.onRecord(makeRecord());
      metrics.onRecord(makeRecord());
      metrics.setRun({ point: 'concurrency=2', repetition: '2' });
      const text = await metrics.render();
      assert.equal(sample(text, 'chatload_requests_completed_total', 'point="concurrency=1",repetition="1"'), 1);
      assert.equal(sample(text, 'chatload_requests_completed_total', 'point="concurrency=2",repetition="1"'), 2);
      assert.equal(sample(text, 'chatload_requests_completed_total', 'point="concurrency=2",repetition="2"'), 0);
      assert.equal(sample(text, 'chatload_ttft_seconds_count', 'point="concurrency=2",repetition="2"'), 0);
    } finally {
      metrics.close();
    }
  });
});

/** GET `url` through `agent`: status and body. */
function fetchText(url: string, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

describe('serveLiveMetrics', () => {
  test('serves /metrics on 127.0.0.1, 404 elsewhere, and closes with a keep-alive scraper connected', async () => {
    const served = await serveLiveMetrics(0);
    const agent = new Agent({ keepAlive: true });
    try {
      served.metrics.onRecord(makeRecord());
      assert.match(served.server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const page = await fetchText(served.server.url, agent);
      assert.equal(page.status, 200);
      assert.equal(sample(page.body, 'chatload_requests_completed_total', RUN), 1);
      assert.equal((await fetchText(served.server.url.replace('/metrics', '/'), agent)).status, 404);
      // The agent keeps its socket open: close() must not wait for it.
      await served.close();
      await assert.rejects(fetchText(served.server.url, new Agent()), /ECONNREFUSED/);
    } finally {
      agent.destroy();
      await served.close();
    }
  });

  test('a port in use is a ConfigError naming --metrics-port', async () => {
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const port = (held.address() as AddressInfo).port;
    try {
      await assert.rejects(serveLiveMetrics(port), (error: unknown) => error instanceof ConfigError && /^--metrics-port \d+: cannot serve the live metrics: the port is in use/.test(error.message));
    } finally {
      held.close();
    }
  });
});
