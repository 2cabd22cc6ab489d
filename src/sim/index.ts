import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../util/module-worker.js';
import { ChatloadError, ConfigError } from '../errors/index.js';
import { DEFAULT_ROUTER, replicasProblem, routerProblem, type RouterKind } from '../options/values/replicas.js';
import { DEFAULT_PROFILE, profiles, resolveSimConfig, type SimConfig } from './config.js';
import { parseFaultSpec, type FaultRule } from './faults.js';
import { SimServer } from './server.js';
import { chatloadVersion } from '../util/version.js';
import { defaultTokenCounter, resolveTokenCounter } from '../tokenizer/index.js';

export { type SimConfig, profiles };
export { parseSimConfigOverrides, resolveSimConfig, DEFAULT_PROFILE } from './config.js';
export { parseFaultSpec, FAULT_KINDS, type FaultKind, type FaultRule } from './faults.js';
export type { TraceLine } from './request-trace.js';
export { REPLICA_HEADER } from './server.js';
export { ROUTER_KINDS, MAX_REPLICAS, type RouterKind } from '../options/values/replicas.js';

/** How to start a simulator. Every field is optional; see docs/SIMULATOR.md. */
export interface SimulatorOptions {
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 0 (the CLI defaults to 8000) */
  port?: number;
  /** A key of `profiles`. @default 'cpu-tiny' */
  profile?: string;
  /** Overrides on top of the profile (what `--config sim.json` holds); validated, ConfigError naming the key. */
  config?: Partial<SimConfig>;
  /** Seeds generated text, the EOS model and faults. @default 0 */
  seed?: number;
  /** Fault spec, e.g. `500=0.01,429=0.02:2,reset=0.01`, or rules already parsed (a run plan's `--sim-faults`). */
  faults?: string | readonly FaultRule[];
  /** Write one JSONL line per request here. */
  tracePath?: string;
  /** @default 'chatload-sim' */
  modelName?: string;
  /**
   * Tokenizer for prompt accounting, as `--tokenizer` takes it (`approx`, `tiktoken:cl100k_base`, a tokenizer.json or
   * model folder, a Hub model id); prompts are counted with its chat template. @default the approximate tokenizer
   */
  tokenizer?: string;
  /** Simulated engines behind the one port, each with its own KV cache and scheduler (1..64). @default 1 */
  replicas?: number;
  /** How a request's replica is picked: round-robin, random (seeded), sticky (X-Session-ID) or prefix. @default 'round-robin' */
  router?: RouterKind;
}

/** A simulator that is listening. `url` has no trailing slash, e.g. `http://127.0.0.1:8000`. */
export interface RunningSimulator {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, ends open streams, flushes the trace; resolves when everything is closed. */
  close(): Promise<void>;
}

/** The default model name the simulator serves. */
export const DEFAULT_MODEL_NAME = 'chatload-sim';

/** Starts a simulator in this thread. Rejects with ConfigError on bad options, ChatloadError (host:port) if it cannot listen. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const config = resolveSimConfig(options.profile ?? DEFAULT_PROFILE, options.config ?? {});
  const faults = typeof options.faults === 'string' ? parseFaultSpec(options.faults) : (options.faults ?? []);
  const replicas = options.replicas ?? 1;
  const replicasWrong = replicasProblem(replicas);
  if (replicasWrong !== null) throw new ConfigError(`replicas: ${replicasWrong}; got ${replicas}`);
  const router = options.router ?? DEFAULT_ROUTER;
  const routerWrong = routerProblem(router);
  if (routerWrong !== null) throw new ConfigError(`router: ${routerWrong}`);
  const counter = options.tokenizer === undefined ? defaultTokenCounter : await resolveTokenCounter({ tokenizer: options.tokenizer });
  const server = await SimServer.start({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    config,
    seed: options.seed ?? 0,
    faults,
    tracePath: options.tracePath,
    modelName: options.modelName ?? DEFAULT_MODEL_NAME,
    version: chatloadVersion(),
    counter,
    replicas,
    router,
  });
  return {
    url: server.url,
    port: server.port,
    close: () => server.close(),
  };
}

/** Messages from the worker entry (worker.ts). */
export type WorkerMessage =
  | { type: 'ready'; url: string; port: number }
  | { type: 'error'; name: string; message: string; exitCode: number; hint?: string }
  | { type: 'closed' };

/**
 * Starts a simulator in a worker thread, so its event loop is separate from the caller's (benchmarks, `chatload run`
 * without --url). Works from compiled JS (dist/) and under tsx: the worker entry is the sibling file with this
 * module's extension.
 */
export function startSimulatorWorker(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  let worker: Worker;
  try {
    worker = startModuleWorker(import.meta.url, 'worker', options);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    let exited = false;
    worker.on('exit', (code) => {
      exited = true;
      if (!settled) {
        settled = true;
        reject(new ChatloadError(`the simulator worker exited (code ${code}) before it was ready`));
      }
    });
    // Kept for the worker's whole life: an 'error' event without a listener would crash the caller's process.
    worker.on('error', (error) => {
      if (!settled) {
        settled = true;
        reject(new ChatloadError(`the simulator worker failed: ${error.message}`, { cause: error }));
      }
    });
    worker.on('message', (msg: WorkerMessage) => {
      if (settled) return;
      if (msg.type === 'error') {
        settled = true;
        const error = new ChatloadError(msg.message, { exitCode: msg.exitCode, hint: msg.hint });
        error.name = msg.name;
        void worker.terminate();
        reject(error);
        return;
      }
      if (msg.type !== 'ready') return;
      settled = true;
      let closing: Promise<void> | null = null;
      resolve({
        url: msg.url,
        port: msg.port,
        close: () => {
          closing ??= exited
            ? Promise.resolve()
            : new Promise<void>((done) => {
                worker.once('exit', () => done());
                worker.postMessage({ type: 'close' });
              });
          return closing;
        },
      });
    });
  });
}
