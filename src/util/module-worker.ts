import { Worker } from 'node:worker_threads';
import { ChatloadError } from '../errors/index.js';

/**
 * Starts a worker thread whose entry is the module `name` beside `callerUrl` (pass `import.meta.url`), with the
 * caller's own extension: `worker.js` when running compiled JS (dist/), `worker.ts` under tsx. Under tsx on Node 20
 * a worker does not get the loader from an inherited `--import tsx` in time for its entry file ("Unknown file
 * extension .ts"), so a tiny eval'd bootstrap registers tsx first, then imports the entry.
 */
export function startModuleWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  const ext = callerUrl.endsWith('.ts') ? '.ts' : '.js';
  const entry = new URL(`./${name}${ext}`, callerUrl);
  if (ext === '.js') return new Worker(entry, { workerData });
  let tsxApi: string;
  try {
    tsxApi = import.meta.resolve('tsx/esm/api');
  } catch (error) {
    throw new ChatloadError(`running the ${name} worker from TypeScript sources needs tsx`, { cause: error });
  }
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
