import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assessClientHealth, ClientHealthMonitor, type ClientHealthMeasurement } from '../../src/metrics/client-health.js';

const calm: ClientHealthMeasurement = {
  event_loop_delay_ms: { p50: 0.1, p99: 1.5, max: 4, mean: 0.2 },
  cpu_user_ms: 300,
  cpu_system_ms: 100,
  cpu_percent_of_one_core: 40,
  wall_ms: 1000,
  max_rss_mb: 120,
};

describe('assessClientHealth', () => {
  test('no warning under the thresholds', () => {
    const h = assessClientHealth(calm);
    assert.equal(h.bottleneck, false);
    assert.deepEqual(h.warnings, []);
  });

  test('event-loop delay p99 over 20 ms is a bottleneck', () => {
    const h = assessClientHealth({ ...calm, event_loop_delay_ms: { ...calm.event_loop_delay_ms, p99: 25 } });
    assert.equal(h.bottleneck, true);
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0]!, /event-loop delay p99 was 25\.0 ms/);
    assert.match(h.warnings[0]!, /fewer clients or a faster machine/);
  });

  test('CPU over 90% of one core is a bottleneck; thresholds can be changed', () => {
    const busy = { ...calm, cpu_percent_of_one_core: 95 };
    const h = assessClientHealth(busy);
    assert.equal(h.bottleneck, true);
    assert.match(h.warnings[0]!, /CPU was 95% of one core/);
    assert.equal(assessClientHealth(busy, { maxCpuPercentOfOneCore: 99, maxEventLoopDelayP99Ms: 20 }).bottleneck, false);
  });
});

describe('ClientHealthMonitor', () => {
  test('measures a short span and returns consistent numbers', { timeout: 5000 }, async () => {
    const monitor = new ClientHealthMonitor();
    assert.throws(() => monitor.stop(), /before start/);
    monitor.start();
    await new Promise((resolve) => setTimeout(resolve, 60));
    const h = monitor.stop();
    assert.ok(h.wall_ms >= 50, `wall ${h.wall_ms}`);
    assert.ok(h.cpu_user_ms >= 0 && h.cpu_system_ms >= 0);
    assert.ok(h.max_rss_mb > 1);
    const d = h.event_loop_delay_ms;
    assert.ok(d.p50 >= 0 && d.p50 <= d.p99 && d.p99 <= d.max + 1e-9, JSON.stringify(d));
    assert.equal(h.bottleneck, h.warnings.length > 0);
  });
});
