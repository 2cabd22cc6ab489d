/**
 * The time at which the event loop took up the I/O it is running now: the first call in a turn of the loop reads
 * performance.now(), and every later call until the loop's check phase (setImmediate) gets the same reading.
 *
 * Why: everything one poll phase hands over had arrived before the phase began, so the first reading is the nearest
 * the client gets to each chunk's arrival. Reading the clock per chunk instead charges a chunk with the time the
 * client spent on the chunks before it in the same phase (parsing, the expected-cache model's lookup, a collection, a
 * moment descheduled on a loaded machine): two first tokens a server sent in one engine step were read 6-8 ms apart
 * in the same phase on a loaded 2-core machine, and the cache model took them for two steps (docs/METRICS.md, "Its own
 * blocks become visible"). Only the response callbacks read this clock (src/client/exchange.ts), which undici calls
 * from socket reads (and a paused body's resume, from a decoder's callback): all in the poll phase, so a reading is
 * never older than the phase. (One taken in the check phase would last into the next turn's poll phase.)
 */
let phaseMs: number | undefined;

function endPhase(): void {
  phaseMs = undefined;
}

export function ioNow(): number {
  if (phaseMs === undefined) {
    phaseMs = performance.now();
    setImmediate(endPhase);
  }
  return phaseMs;
}
