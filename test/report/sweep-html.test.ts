import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import { summarize } from '../../src/metrics/summary.js';
import type { SweepPoint } from '../../src/metrics/sweep-point.js';
import { renderSweepHtml } from '../../src/report/sweep-html.js';
import { syntheticRecords, XSS } from '../helpers/report-fixtures.js';

const records = syntheticRecords({ failEvery: 0 });
const point: SweepPoint = { kind: 'concurrency', value: 2, outputDir: '/tmp/x/01-concurrency-2', summary: summarize(records), perTurn: summarizePerTurn(records), meetsSlos: null, stopReason: 'completed' };

/** The page's <header>. */
function header(html: string): string {
  return /<header>([^]*?)<\/header>/.exec(html)?.[1] ?? '';
}

describe('sweep.html heading', () => {
  test('names the model, the server and the date; a URL\'s password is redacted here too', () => {
    const html = renderSweepHtml([point], { plan: 'clients: 2', bestRate: null, server: 'http://bench:hunter2@gpu-7:8000/v1', model: 'llama-3-8b', createdAt: '2026-12-01T10:00:00.000Z' });
    assert.equal(header(html), '<h1>chatload sweep: llama-3-8b</h1><p class="sub">server http://bench:[redacted]@gpu-7:8000/v1 · clients: 2 · created 2026-12-01T10:00:00.000Z</p>');
    assert.match(html, /<title>chatload sweep: llama-3-8b<\/title>/);
    assert.ok(!html.includes('hunter2'));
  });

  test('a model name or URL from outside is escaped', () => {
    const html = renderSweepHtml([point], { plan: 'clients: 2', bestRate: null, server: `http://gpu/${XSS}`, model: XSS, createdAt: '2026-12-01T10:00:00.000Z' });
    assert.ok(!header(html).includes('<script>'), 'no markup from the model or URL');
    assert.ok(header(html).includes('&lt;script&gt;window.__pwned=1&lt;/script&gt;'));
  });

  test('without them (an older caller), the heading is the plan alone', () => {
    assert.equal(header(renderSweepHtml([point], { plan: 'clients: 2', bestRate: null })), '<h1>chatload sweep</h1><p class="sub">clients: 2</p>');
  });
});
