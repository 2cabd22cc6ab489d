// Loaded with `node --import bench/thread-cpu.mjs ...` by bench/startup.ts (sections 3t and 3e): as the process exits,
// writes the CPU its main thread and its other threads (V8's background compiler and GC helpers, libuv's pool) used,
// from the scheduler's own accounting (/proc/self/task/TID/schedstat, ns), as JSON to the file named by
// THREAD_CPU_FILE. With THREAD_CPU_AT_RESPONSES=N it also takes the same reading when undici completes its Nth POST
// (`atResponse`; a chat request is a POST, the readiness and /metrics probes are GETs), so that what a run spends
// after its last response (results, summary, report) can be told apart. Linux only. Plain JS so that it loads nothing
// but node: built-ins.
import { subscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** CPU of the main thread and of all other threads so far, ms. */
function threadsNow() {
  let mainNs = 0;
  let otherNs = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    let ns = 0;
    try {
      ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      continue; // the thread ended between the listing and the read
    }
    if (Number(tid) === process.pid) mainNs += ns;
    else otherNs += ns;
  }
  return { mainMs: mainNs / 1e6, otherMs: otherNs / 1e6 };
}

let atResponse = null;
const responses = Number(process.env.THREAD_CPU_AT_RESPONSES ?? 0);
if (responses > 0) {
  let seen = 0;
  subscribe('undici:request:trailers', ({ request }) => {
    if (request.method === 'POST' && ++seen === responses) atResponse = threadsNow();
  });
}

process.on('exit', () => {
  writeFileSync(process.env.THREAD_CPU_FILE, JSON.stringify({ ...threadsNow(), atResponse }));
});
