import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIST_CLI, ensureDist } from '../helpers/dist.js';

ensureDist();

// The live panel in a real terminal (issue 18): tmux runs the CLI in a 44-column pane, the test reads the screen with
// capture-pane while lines are printed mid-run (-v: one per request) and the pane is narrowed, and checks that no
// panel row is left behind in the scrollback and no drawn row is wider than the pane. .ci/run installs tmux.
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const session = `chatload-live-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'chatload-live-'));

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

after(() => {
  spawnSync('tmux', ['kill-session', '-t', session]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the live panel in tmux', { skip: hasTmux ? false : 'tmux is not installed (.ci/run installs it)' }, () => {
  test('redraws in place: printed lines stay whole, a narrowed pane is not garbled, nothing of the panel stays behind', { timeout: 60_000 }, async () => {
    const command = `node ${DIST_CLI} run -n 60 -v --progress panel --sim-faults 500=0.1 --max-error-rate 1 --output-dir ${join(dir, 'run')} 2>&1; echo EXITED $?; sleep 120`;
    tmux('new-session', '-d', '-s', session, '-x', '44', '-y', '16', command);
    let panels = 0;
    let narrowed = false;
    /** Panels seen after the pane was narrowed: the narrowed check ran on them. */
    let narrowPanels = 0;
    let screen = '';
    for (let i = 0; i < 200 && !screen.includes('EXITED'); i++) {
      await sleep(100);
      screen = tmux('capture-pane', '-p', '-t', session);
      const width = narrowed ? 30 : 44;
      if (/chatload · (starting|warmup|ramp-up|steady|draining)/.test(screen)) {
        panels++;
        if (narrowed) narrowPanels++;
        for (const line of screen.split('\n')) assert.ok(line.length <= width, `a row wider than the pane: ${JSON.stringify(line)}`);
        if (panels === 2) {
          tmux('resize-window', '-t', session, '-x', '30', '-y', '16');
          narrowed = true;
        }
      }
    }
    assert.match(screen, /EXITED 0/, screen);
    assert.ok(panels >= 2, 'the panel was seen while the run went on');
    // The pane was narrowed mid-run and the panel drawn again in it: its rows were checked against 30 columns.
    assert.ok(narrowPanels >= 1, `the panel was seen in the narrowed pane (${panels} panels seen in all)`);
    const history = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', session);
    assert.doesNotMatch(history, /chatload · (starting|warmup|ramp-up|steady|draining)|\[█|░|in flight \d|client: loop delay/, `panel rows left behind:\n${history}`);
    // Every request's -v line printed mid-run is there, whole (joined across wraps by -J), once each.
    const requestLines = history.split('\n').filter((l) => / turn \d+ \(client \d+\): /.test(l));
    assert.equal(requestLines.length, 60, history);
    for (const line of requestLines) assert.match(line, /^\S+ turn \d+ \(client \d+\): (ttft [\d.]+ ms, e2el [\d.]+ ms, \d+ tokens|\w+: .+)$/);
    assert.match(history, /chatload: wrote /);
  });
});
