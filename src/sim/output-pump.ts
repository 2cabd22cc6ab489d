/**
 * Outputs written per event-loop turn: vLLM v1's output handler processes a step's outputs in chunks of
 * VLLM_V1_OUTPUT_PROC_CHUNK_SIZE (128) and yields to the event loop between chunks.
 */
export const OUTPUT_CHUNK_SIZE = 128;

/**
 * Writes a step's token outputs as vLLM v1's API server does: in chunks of 128, yielding to the event loop between
 * chunks (setImmediate). A step of 1,000 streams then no longer holds the loop for its whole write (~20 ms here):
 * requests that arrive meanwhile are parsed and timestamped, /metrics answers, and each chunk's bytes leave as soon as
 * it is written, so clients start reading while the rest of the step is still being written. Order is kept: outputs
 * run in the order they were pushed.
 */
export class OutputPump {
  #queue: Array<() => void> = [];
  #head = 0;
  #scheduled = false;

  /** Queues one output write; it runs in this or a later chunk, after every output pushed before it. */
  push(write: () => void): void {
    this.#queue.push(write);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#drain);
    }
  }

  readonly #drain = (): void => {
    const end = Math.min(this.#head + OUTPUT_CHUNK_SIZE, this.#queue.length);
    // Each write is independent: one that throws must not drop the chunk's other outputs or stall the pump.
    for (; this.#head < end; this.#head++) {
      try {
        this.#queue[this.#head]!();
      } catch (error) {
        process.emitWarning(`simulator output write failed: ${(error as Error).message}`);
      }
    }
    if (this.#head < this.#queue.length) {
      setImmediate(this.#drain);
      return;
    }
    this.#queue = [];
    this.#head = 0;
    this.#scheduled = false;
  };
}
