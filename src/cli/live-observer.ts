import type { BenchmarkHooks } from '../benchmark/run-benchmark.js';
import type { LiveView } from '../report/progress.js';
import { contentText, requestLine } from '../report/request-lines.js';
import { escapeControl } from '../util/control-chars.js';

/**
 * The run's observer as `run` and `sweep` both wire it to the terminal: the live view's counts, a line per request
 * with -v, each answer with --print-content, warnings through `say` (above the panel, or nothing with -q).
 */
export function liveObserver(
  live: LiveView,
  flags: { verbose: boolean; printContent: boolean },
  say: (line: string) => void,
): NonNullable<BenchmarkHooks['observer']> {
  return {
    onSend: () => live.onSend(),
    onQueued: (delta) => live.onQueued(delta),
    onPhase: (phase) => live.onPhase(phase),
    onRecord: (record) => {
      live.onRecord(record);
      if (flags.verbose) live.print(escapeControl(requestLine(record)));
    },
    // Server and dataset text is in all three: escaped for the terminal (util/control-chars.ts).
    onWarning: (message) => say(`chatload: warning: ${escapeControl(message)}\n`),
    onContent: flags.printContent ? (event) => live.print(escapeControl(contentText(event))) : undefined,
  };
}
