// compare --fail-on (issue #32, part 1): the gate spec, each gate's verdict against the noise band, and the gates'
// Markdown and JUnit forms.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/errors/index.js';
import type { ComparisonRow } from '../../src/report/compare.js';
import { formatGates, gatesJunit, gatesMarkdown, xmlText } from '../../src/report/gate-output.js';
import { GATE_METRICS, parseGateSpec } from '../../src/options/values/gate-spec.js';
import { evaluateGates } from '../../src/report/gates.js';
import type { RepeatInterval } from '../../src/report/repeats.js';

/** A comparison row of `key`: baseline and candidate values with their half-widths. */
function row(key: string, unit: string, values: [number | null, number | null], noise: [number | null, number | null]): ComparisonRow {
  return { key, unit, better: 'lower', values, noise };
}

/** The message of the ConfigError `parseGateSpec(spec)` throws. */
function refusal(spec: string): string {
  try {
    parseGateSpec(spec);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes('\n'), 'one line');
    return error.message;
  }
  assert.fail(`${spec} was accepted`);
}

describe('--fail-on SPEC', () => {
  test('relative, absolute with a unit, absolute plain', () => {
    const gates = parseGateSpec('median_ttft_ms>+20%, p99_tpot_ms>+5ms,output_throughput<-5%,prefix_cache.efficiency<-0.02,p90_e2el_ms>0.5s,cache_hit_ratio<-2pt');
    assert.deepEqual(
      gates.map((g) => [g.metric, g.rowKey, g.op, g.limit, g.relative]),
      [
        ['median_ttft_ms', 'ttft p50', '>', 0.2, true],
        ['p99_tpot_ms', 'tpot p99', '>', 5, false],
        ['output_throughput', 'output_throughput', '<', -0.05, true],
        ['prefix_cache.efficiency', 'cache_efficiency', '<', -0.02, false],
        ['p90_e2el_ms', 'e2el p90', '>', 500, false],
        ['cache_hit_ratio', 'cache_hit_ratio', '<', -0.02, false],
      ],
    );
    assert.equal(gates[0]!.text, 'median_ttft_ms>+20%');
  });

  test('every metric names a row compare makes', () => {
    const keys = new Set(['request_throughput', 'output_throughput', 'total_token_throughput', 'completed', 'failed', 'error_rate', 'cache_hit_ratio', 'cache_efficiency']);
    for (const m of ['ttft', 'tpot', 'e2el']) for (const f of ['mean', 'p50', 'p90', 'p99']) keys.add(`${m} ${f}`);
    for (const f of ['mean', 'p50', 'p99']) keys.add(`itl ${f}`);
    for (const [name, { rowKey }] of GATE_METRICS) assert.ok(keys.has(rowKey), `${name} -> ${rowKey}`);
  });

  test('a bad spec is one line naming the gate and what was expected', () => {
    assert.match(refusal('median_tft_ms>+20%'), /^--fail-on median_tft_ms>\+20%: unknown metric "median_tft_ms"; known: \{mean,median,p90,p99\}_\{ttft,tpot,e2el\}_ms, /);
    assert.match(refusal('median_ttft_ms>=20%'), /^--fail-on median_ttft_ms>=20%: bad operator ">="; expected > /);
    assert.match(refusal('median_ttft_ms 20%'), /^--fail-on median_ttft_ms 20%: expected METRIC>LIMIT or METRIC<LIMIT/);
    assert.match(refusal('median_ttft_ms>+2x0%'), /: bad limit "\+2x0%"; expected a number/);
    assert.match(refusal('median_ttft_ms>'), /: bad limit ""; expected a number/);
    assert.match(refusal('output_throughput<-5ms'), /: unit "ms" does not fit output_throughput \(tok\/s\); expected %, tok\/s, or a plain number in tok\/s$/);
    assert.match(refusal('median_ttft_ms>+20%,,p99_tpot_ms>1'), /an empty gate between commas/);
    assert.match(refusal(' '), /^--fail-on: expected at least one gate/);
  });
});

describe('gate verdicts', () => {
  const [ttft] = parseGateSpec('median_ttft_ms>+20%');
  const [tput] = parseGateSpec('output_throughput<-5%');
  const [eff] = parseGateSpec('prefix_cache.efficiency<-0.02');

  test('a 4x TTFT fails; the same TTFT passes; a crossing inside the band passes', () => {
    const [slow] = evaluateGates([ttft!], [row('ttft p50', 'ms', [40, 160], [1, 2])]);
    assert.equal(slow!.verdict, 'fail');
    assert.equal(slow!.relativeChange, 3);
    assert.ok(Math.abs(slow!.band! - Math.sqrt(5)) < 1e-12);
    assert.equal(evaluateGates([ttft!], [row('ttft p50', 'ms', [40, 41], [1, 1])])[0]!.verdict, 'pass');
    // +25% crosses +20%, but the runs' spread (±12 ms each: ±17 ms on the change) holds a 10 ms change.
    const noisy = evaluateGates([ttft!], [row('ttft p50', 'ms', [40, 50], [12, 12])])[0]!;
    assert.deepEqual([noisy.verdict, noisy.failed], ['noise', false]);
    // No band known: the limit alone decides.
    assert.equal(evaluateGates([ttft!], [row('ttft p50', 'ms', [40, 50], [null, 12])])[0]!.verdict, 'fail');
  });

  test('< gates fail on a drop; absolute plain limits; a missing value fails', () => {
    assert.equal(evaluateGates([tput!], [row('output_throughput', 'tok/s', [1000, 900], [5, 5])])[0]!.verdict, 'fail');
    assert.equal(evaluateGates([tput!], [row('output_throughput', 'tok/s', [1000, 1100], [5, 5])])[0]!.verdict, 'pass');
    assert.equal(evaluateGates([eff!], [row('cache_efficiency', 'fraction', [0.95, 0.9], [0.001, 0.001])])[0]!.verdict, 'fail');
    assert.equal(evaluateGates([eff!], [row('cache_efficiency', 'fraction', [0.95, 0.94], [0.001, 0.001])])[0]!.verdict, 'pass');
    const missing = evaluateGates([eff!], [row('cache_efficiency', 'fraction', [0.95, null], [0.001, null])])[0]!;
    assert.deepEqual([missing.verdict, missing.failed], ['missing', true]);
  });

  test('the band is the repeats\' when both runs have them', () => {
    const interval = (mean: number, half: number): RepeatInterval[] => [{ key: 'ttft p50', unit: 'ms', values: [mean], mean, ci95_half_width: half }];
    const rows = [row('ttft p50', 'ms', [40, 60], [3, 3])];
    assert.equal(evaluateGates([ttft!], rows, [interval(40, 3), interval(60, 3)])[0]!.bandSource, 'repeat');
    assert.equal(evaluateGates([ttft!], rows, [interval(40, 3), undefined])[0]!.bandSource, 'requests');
  });

  test('the outputs: a line per gate, a Markdown table, JUnit XML escaped', () => {
    const results = evaluateGates([ttft!, tput!], [row('ttft p50', 'ms', [40, 160], [1, 2]), row('output_throughput', 'tok/s', [1000, 1001], [5, 5])]);
    const runs = { base: 'base', candidate: 'cand & <"new"> \'x\' |*' };
    const text = formatGates(results, runs);
    const failLine = text.split('\n').find((l) => l.includes('median_ttft_ms>+20%'))!;
    assert.match(failLine, /40 ms .*160 ms .*\+120 ms \(\+300\.0%\) .*±2\.24 ms \(±5\.6%\), per-request 95% .*FAIL/);
    assert.match(text.split('\n').find((l) => l.includes('output_throughput<-5%'))!, /pass/);
    assert.match(text, /chatload compare: 1 of 2 gates failed: median_ttft_ms>\+20%\n$/);
    const md = gatesMarkdown(results, runs);
    assert.match(md, /^### chatload compare: 1 of 2 gates failed\n/);
    assert.match(md, /\| `median_ttft_ms>\+20%` \| 40 ms \| 160 ms \| \+120 ms \(\+300\.0%\) \| .* \| \*\*FAIL\*\* \|/);
    assert.match(md, /candidate cand &amp; &lt;"new"&gt; 'x' \\\|\\\*\./);
    const xml = gatesJunit(results, runs);
    assert.match(xml, /<testsuite name="chatload compare --fail-on" tests="2" failures="1" errors="0" skipped="0">/);
    assert.match(xml, /<property name="candidate" value="cand &amp; &lt;&quot;new&quot;&gt; &apos;x&apos; \|\*"\/>/);
    assert.match(xml, /<testcase classname="chatload.compare" name="median_ttft_ms&gt;\+20%">\n {6}<failure type="gate" message="median_ttft_ms&gt;\+20%: base 40 ms, /);
    assert.match(xml, /<testcase classname="chatload.compare" name="output_throughput&lt;-5%">\n {6}<system-out>/);
    assert.equal((xml.match(/<testcase /g) ?? []).length, 2);
    // Outside markup, no raw < or & is left, and characters XML 1.0 forbids are dropped.
    assert.doesNotMatch(xml.replace(/<\/?[a-z?][^<>]*>/g, ''), /[<>]|&(?!amp;|lt;|gt;|quot;|apos;)/);
    assert.equal(xmlText('a\u0000b\u001bc\td'), 'abc\td');
  });
});
