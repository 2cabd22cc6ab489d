import { letLoopGo } from '../util/loop-turns.js';

/*
 * The expected-cache model's operations on its indexes, run one at a time in call order (issue #14): an operation is
 * a generator whose steps are short; one that outlasts `sliceMs` lets the event loop go and finishes later, and the
 * ones called meanwhile wait behind it. So every operation sees exactly the indexes it would have seen had each run
 * whole at its call. A step may also yield a promise (a prompt's ids still on their way from the server, issue #30):
 * the queue then waits for it, and everything called after waits behind, so call order still holds.
 */

/** An operation: steps of work; a yielded promise is waited for before the next step. */
export type Operation = Generator<void | Promise<unknown>, void, void>;

interface QueuedOperation {
  steps: Operation;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** A promise its last step yielded, not yet waited for. */
  waitFor: Promise<unknown> | undefined;
}

/** Operations in call order, the first one running (see the comment at the top). */
export class OperationQueue {
  readonly #queue: QueuedOperation[] = [];
  readonly #sliceMs: number;

  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
  }

  /**
   * Runs an operation: at once when none waits, for up to sliceMs, and the rest of it (or all of it, behind others)
   * between turns of the event loop. Returns undefined when it ran whole at once, else a promise of its end. The
   * sliceMs counts from before the first step: it runs in the caller's turn, beside the response's own handling.
   */
  run(steps: Operation): Promise<void> | undefined {
    let waitFor: Promise<unknown> | undefined;
    if (this.#queue.length === 0) {
      const t0 = performance.now();
      for (;;) {
        const step = steps.next();
        if (step.done === true) return undefined;
        if (step.value !== undefined) {
          waitFor = step.value;
          break;
        }
        if (performance.now() - t0 >= this.#sliceMs) break;
      }
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ steps, resolve, reject, waitFor });
      if (this.#queue.length === 1) void this.#drain();
    });
  }

  /** Runs the queued operations in order, sliceMs at a time with the loop let go between. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const first = this.#queue[0]!;
      if (first.waitFor !== undefined) {
        // Its failure is the operation's to handle: it is resumed either way and reads the outcome itself.
        await first.waitFor.catch(() => {});
        first.waitFor = undefined;
      } else await letLoopGo();
      const t0 = performance.now();
      do {
        const head = this.#queue[0]!;
        if (head.waitFor !== undefined) break;
        let done: boolean;
        try {
          const step = head.steps.next();
          done = step.done === true;
          if (!done && step.value !== undefined) head.waitFor = step.value;
        } catch (error) {
          this.#queue.shift();
          head.reject(error);
          continue;
        }
        if (done) {
          this.#queue.shift();
          head.resolve();
        }
      } while (this.#queue.length > 0 && performance.now() - t0 < this.#sliceMs);
    }
  }
}
