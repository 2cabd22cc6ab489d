// Loaded with `node --import bench/thread-cpu.mjs ...` by bench/startup.ts (section 3t): as the process exits, writes
// the CPU its main thread and its other threads (V8's background compiler and GC helpers, libuv's pool) used, from the
// scheduler's own accounting (/proc/self/task/TID/schedstat, ns), as JSON to the file named by THREAD_CPU_FILE.
// Linux only. Plain JS so that it loads nothing but node: built-ins.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

process.on('exit', () => {
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
  writeFileSync(process.env.THREAD_CPU_FILE, JSON.stringify({ mainMs: mainNs / 1e6, otherMs: otherNs / 1e6 }));
});
