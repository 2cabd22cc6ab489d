/*
 * Letting the event loop go between slices of long work (issue #14), with the slices of all such jobs sharing one
 * budget per turn of the loop. Each job (a large message's tokenizing, its JSON, the expected cache's pool steps, the
 * simulator's prompt hash) sizes its slices to about half a millisecond, but a plain `setImmediate` per slice ran every job
 * that was waiting in the same turn, one after the other: three jobs made a 3 ms gap, and a scavenge landing in it
 * made 5-7 ms. Here a turn lets waiting slices go one at a time, FIFO, until TURN_BUDGET_MS is spent; the rest wait for
 * the next turn, after timers and sockets have run. The first waiting slice of a turn always runs, so every job goes
 * on; a job alone is let go at once each turn, as before.
 *
 * A slice's work is what its job does synchronously after `await letLoopGo()` resolves: the next slice is let go from a
 * microtask queued after that resolution, so it runs once the previous job's continuation has run to its next await.
 */

/**
 * Sliced work let go per turn of the loop, all jobs together (a single slice may take longer). Half a millisecond,
 * with the slices' own targets (tokenizer/sliced.ts, cache-model/expected-cache.ts): a turn's gap also holds the responses'
 * handling and, at times, a GC pause, and at 1 ms the longest step of a 10 MB message's run was 3.2-3.5 ms (medians
 * of 6 reps) against 2.3-2.4 at 0.5 (bench/long-context.ts, bench/NOTES.md).
 */
const TURN_BUDGET_MS = 0.5;

/** Slices waiting for a turn, oldest first. */
let waiting: Array<() => void> = [];
let turnScheduled = false;

/** Resolves on a later turn of the event loop, when this turn's budget for sliced work allows (see above). */
export function letLoopGo(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(runTurn);
    }
  });
}

function runTurn(): void {
  turnScheduled = false;
  // Slices that ask during this turn wait for the next one.
  const batch = waiting;
  waiting = [];
  const startMs = performance.now();
  let next = 0;
  const letOneGo = (): void => {
    if (next > 0 && performance.now() - startMs >= TURN_BUDGET_MS) {
      // Over budget: the rest go first on the next turn.
      waiting = batch.slice(next).concat(waiting);
      if (!turnScheduled) {
        turnScheduled = true;
        setImmediate(runTurn);
      }
      return;
    }
    const resolve = batch[next++]!;
    resolve();
    // Queued after the resolution's continuation, so it runs once that slice's synchronous work is done.
    if (next < batch.length) queueMicrotask(letOneGo);
  };
  letOneGo();
}
