// What chatload says, in real processes (issue #34, item 7): counts that agree with their nouns, -p with
// --session-rate said to be ignored, and a URL given without its scheme answered with the one to write.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { writeSyntheticDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

const work = tempDir('cli-words');
after(() => rmSync(work, { recursive: true, force: true }));

const warnings = (dir: string): string[] => (JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { warnings: string[] }).warnings;

describe('counts and their nouns', () => {
  test('one conversation left unfinished is "1 conversation was started"', { timeout: 60_000 }, async () => {
    // One client, -n 1: the client's first conversation has had one of its three turns when -n stops the run.
    const input = writeSyntheticDataset(work, 2, 3);
    const out = join(work, 'one-unfinished');
    const r = await runCli(['run', '-i', input, '-p', '1', '-n', '1', '--sim-profile', 'cpu-tiny', '--output-dir', out]);
    assert.equal(r.code, 0, r.stderr);
    const said = '1 conversation was started but not finished when the run stopped (max_requests); it is counted as unfinished';
    assert.ok(r.stderr.includes(`chatload: warning: ${said}\n`), r.stderr);
    assert.ok(warnings(out).includes(said));
    assert.match(r.stderr, /chatload: 2 conversations from /);
  });
});

describe('-p with --session-rate', () => {
  test('says at the start that -p is ignored, and the run goes on', { timeout: 60_000 }, async () => {
    const out = join(work, 'open-p');
    const r = await runCli(['run', '--session-rate', '50', '-p', '8', '-n', '4', '--sim-profile', 'cpu-tiny', '--output-dir', out]);
    assert.equal(r.code, 0, r.stderr);
    const said = '-p/--num-clients 8 is ignored with --session-rate: sessions arrive at its rate, each with its own requests (--max-concurrency caps those in flight)';
    assert.equal(r.stderr.split('\n')[0], `chatload: warning: ${said}`, 'the first line printed');
    assert.ok(warnings(out).includes(said), 'and results.json keeps it');
  });

  test('with --warmup-step, -p sizes only the warmup; without -p (the demo sets 16 clients itself) nothing is said', { timeout: 90_000 }, async () => {
    const warm = await runCli(['run', '--ramp-up', 'linear:10:50:1', '-p', '2', '--warmup-step', '-n', '4', '--sim-profile', 'cpu-tiny', '--output-dir', join(work, 'open-warm')]);
    assert.equal(warm.code, 0, warm.stderr);
    assert.match(warm.stderr, /^chatload: warning: -p\/--num-clients 2 sets only --warmup-step's concurrency with --ramp-up: /);
    const plain = await runCli(['run', '--session-rate', '50', '-n', '4', '--sim-profile', 'cpu-tiny', '--output-dir', join(work, 'open-plain')]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /num-clients/);
  });
});

describe('a URL without its scheme', () => {
  test('-u localhost:8000 suggests http://localhost:8000, in one line, exit 2', async () => {
    const r = await runCli(['run', '-u', 'localhost:8000', '-n', '1']);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'chatload: invalid options: --url: expected an http:// or https:// URL, got "localhost:8000": did you mean http://localhost:8000?\n');
  });

  test('so do OPENAI_BASE_URL and --scrape-metrics; a mistyped scheme gets no guess', async () => {
    const env = await runCli(['run', '-n', '1'], { env: { OPENAI_BASE_URL: '10.0.0.5:8000/v1' } });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /^chatload: invalid options: --url \(from OPENAI_BASE_URL\): expected an http:\/\/ or https:\/\/ URL, got "10\.0\.0\.5:8000\/v1": did you mean http:\/\/10\.0\.0\.5:8000\/v1\?\n$/);
    const scrape = await runCli(['run', '--scrape-metrics', 'localhost:8000/metrics', '-n', '1']);
    assert.equal(scrape.code, 2);
    assert.match(scrape.stderr, /--scrape-metrics: .*got "localhost:8000\/metrics": did you mean http:\/\/localhost:8000\/metrics\?\n$/);
    const typo = await runCli(['run', '-u', 'http//localhost:8000', '-n', '1']);
    assert.equal(typo.code, 2);
    assert.equal(typo.stderr, 'chatload: invalid options: --url: expected an http:// or https:// URL, got "http//localhost:8000"\n');
  });
});
