// `run --metrics-port` (issue #32, part 3): mid-run, GET /metrics shows completed requests and TTFT buckets, with one
// thread and with --workers (whose records reach the coordinator's Recorder); the run ends on SIGINT with a scraper's
// keep-alive socket open, and the port is closed after it. `sweep` labels each point. Against the built-in simulator.
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('live-metrics-cli');

/** GET `url` through `agent`: the body. */
function fetchText(url: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/** The sum of every `name{...}` sample in `text` whose labels contain `having`. */
function total(text: string, name: string, having = ''): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(having))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

const URL_LINE = /live metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/;

/**
 * Runs `args` and scrapes its /metrics every 100 ms through one keep-alive agent, calling `onPage` with each page;
 * when it returns true the child gets SIGINT. Resolves with the CLI's result, the URL and the pages seen.
 */
async function scrapeRun(args: string[], onPage: (page: string) => boolean) {
  const agent = new Agent({ keepAlive: true });
  let url: string | undefined;
  let polling = false;
  const pages: string[] = [];
  const poll = async (child: ChildProcess): Promise<void> => {
    while (child.exitCode === null && child.signalCode === null) {
      const page = await fetchText(url!, agent).catch(() => undefined);
      if (page === undefined) return;
      pages.push(page);
      if (onPage(page)) {
        child.kill('SIGINT');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    const result = await runCli(args, {
      timeoutMs: 240_000,
      onStdout: (text, child) => {
        url ??= URL_LINE.exec(text)?.[1];
        if (url !== undefined && !polling) {
          polling = true;
          void poll(child);
        }
      },
    });
    return { result, url, pages };
  } finally {
    agent.destroy();
  }
}

describe('run --metrics-port', { timeout: 600_000 }, () => {
  for (const workers of ['1', '2']) {
    test(`mid-run: completed requests and TTFT buckets; closed after a SIGINT (--workers ${workers})`, async () => {
      const args = ['run', '--duration', '600', '--metrics-port', '0', '--workers', workers, '--progress', 'off', '--output-dir', join(dir, `run-${workers}`)];
      const { result, url, pages } = await scrapeRun(args, (page) => total(page, 'chatload_requests_completed_total') > 0 && total(page, 'chatload_ttft_seconds_count') > 0);
      assert.ok(url !== undefined, result.stderr);
      assert.equal(result.signal, null, 'the run ended by itself after SIGINT, with a keep-alive scraper connected');
      assert.equal(result.code, 130, result.stderr);
      const last = pages.at(-1)!;
      assert.ok(total(last, 'chatload_requests_completed_total', 'point="run"') > 0, last);
      // Buckets: cumulative counts, the +Inf one holding every observation.
      assert.match(last, /^chatload_ttft_seconds_bucket\{le="0\.1",point="run",repetition="1"\} \d+$/m);
      assert.equal(total(last, 'chatload_ttft_seconds_bucket', 'le="+Inf"'), total(last, 'chatload_ttft_seconds_count'));
      assert.ok(total(last, 'chatload_requests_in_flight') >= 0);
      await assert.rejects(fetchText(url, new Agent()), /ECONNREFUSED/, 'the port is closed after the run');
    });
  }
});

describe('sweep --metrics-port', { timeout: 600_000 }, () => {
  test('one server across the points, each point its own label', async () => {
    const args = ['sweep', '--concurrency', '1,2', '--duration', '3', '--metrics-port', '0', '--progress', 'off', '--output-dir', join(dir, 'sweep')];
    const { result, url, pages } = await scrapeRun(args, () => false);
    assert.ok(url !== undefined, result.stderr);
    assert.equal(result.code, 0, result.stderr);
    const last = pages.at(-1)!;
    assert.ok(total(last, 'chatload_requests_completed_total', 'point="concurrency=1"') > 0, last);
    assert.ok(total(last, 'chatload_requests_completed_total', 'point="concurrency=2"') > 0, last);
    await assert.rejects(fetchText(url, new Agent()), /ECONNREFUSED/);
  });
});
