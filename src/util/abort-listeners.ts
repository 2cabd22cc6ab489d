/*
 * Callbacks on an AbortSignal, each added and removed in constant time. Node's EventTarget keeps a signal's listeners
 * in a linked list that addEventListener walks (to skip a duplicate) and removeEventListener walks again (to find
 * it): with a listener per request on the run's stop signal, each request paid for every other one in flight, ~80-100 µs
 * on the event loop for an add and a remove with 10,000 in flight (bench/abort-listeners.ts). Here a signal has one
 * real listener, which calls a Set of callbacks.
 *
 * The callbacks run as the signal's own listeners would: once, in the order they were added; one removed while the
 * abort is being dispatched is not called, and one added then is not either (the DOM's rule for event listeners).
 */

const callbacksOf = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls the callbacks registered when `signal` fired; the first error any of them threw is thrown after the rest ran. */
function dispatch(signal: AbortSignal, callbacks: Set<() => void>): void {
  callbacksOf.delete(signal);
  let failure: { error: unknown } | undefined;
  for (const callback of [...callbacks]) {
    if (!callbacks.has(callback)) continue; // removed by an earlier one
    try {
      callback();
    } catch (error) {
      failure ??= { error };
    }
  }
  callbacks.clear();
  if (failure !== undefined) throw failure.error;
}

/**
 * Calls `callback` once when `signal` aborts. Returns the function that removes it (a no-op once it ran). As with
 * addEventListener, nothing is called for a signal that has already aborted: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = callbacksOf.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    callbacksOf.set(signal, created);
    signal.addEventListener('abort', () => dispatch(signal, created), { once: true });
  }
  const registered = callbacks;
  registered.add(callback);
  return () => {
    registered.delete(callback);
  };
}
