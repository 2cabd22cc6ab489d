/*
 * Worker-thread entry of startSimulatorWorker: starts a simulator from workerData, reports `ready` (or `error`), and
 * on a `close` message closes it and lets the thread end.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isChatloadError } from '../errors/index.js';
import { startSimulator, type SimulatorOptions, type WorkerMessage } from './index.js';

const port = parentPort!;

function post(msg: WorkerMessage): void {
  port.postMessage(msg);
}

try {
  const sim = await startSimulator(workerData as SimulatorOptions);
  port.on('message', (msg: { type?: string }) => {
    if (msg.type !== 'close') return;
    void sim.close().then(() => {
      post({ type: 'closed' });
      port.close();
    });
  });
  post({ type: 'ready', url: sim.url, port: sim.port });
} catch (error) {
  const e = error as Error;
  post({
    type: 'error',
    name: e.name,
    message: e.message,
    exitCode: isChatloadError(e) ? e.exitCode : 1,
    ...(isChatloadError(e) && e.hint !== undefined ? { hint: e.hint } : {}),
  });
  port.close();
}
