// Counts the modules a process loads, for bench/startup.ts: `node --import ./bench/module-log.mjs ...` with MODULE_LOG
// set to a file. ES modules are seen by a load hook (Node 20 runs hooks on their own thread, where this same file is
// loaded again as the hooks module); CommonJS files, which CommonJS packages require among themselves without the
// ESM loader, are read from require.cache at exit. Each line of the file is `esm URL` or `cjs PATH`.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const log = process.env.MODULE_LOG;

/** The load hook (hooks thread): one line per ES module or CommonJS entry loaded through import. */
export async function load(url, context, nextLoad) {
  if (log) appendFileSync(log, `esm ${url}\n`);
  return nextLoad(url, context);
}

if (isMainThread && log) {
  register(import.meta.url);
  const require = createRequire(import.meta.url);
  process.on('exit', () => appendFileSync(log, Object.keys(require.cache).map((path) => `cjs ${path}\n`).join('')));
}
