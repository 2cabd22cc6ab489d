import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError } from '../errors/index.js';
import { DEFAULT_MODEL_NAME, MAX_REPLICAS, parseSimConfigOverrides, profiles, ROUTER_KINDS, startSimulator, type RouterKind, type SimConfig } from '../sim/index.js';
import { onStopSignals } from './signals.js';
import { COMMAND_DESCRIPTIONS } from './command-descriptions.js';
import { examplesText } from './examples.js';
import { statInputFile } from '../util/input-file.js';
import { prepareOutputFile } from '../store/output-dir.js';

/**
 * What serve refuses in one line (issue #35): an empty --host (Node listens on every interface then: binding beyond
 * loopback takes an explicit address), an empty --model-name, and --tokenizer server (the simulator is the server).
 */
function checkServeOptions(options: ServeCliOptions): void {
  if (options.host.trim() === '') throw new ConfigError("--host: expected an address to listen on (127.0.0.1 by default; '' would listen on every interface)");
  if (options.modelName.trim() === '') throw new ConfigError('--model-name: expected a model name');
  if (options.tokenizer.trim() === 'server') throw new ConfigError('--tokenizer server: the simulator is the server; give approx, tiktoken:…, a tokenizer.json, a model folder or id');
}

/** Options of `chatload serve`, as commander parses them. */
export interface ServeCliOptions {
  host: string;
  port: number;
  profile: string;
  /** Path of a JSON file of SimConfig overrides. */
  config?: string;
  tokenizer: string;
  seed: number;
  faults?: string;
  trace?: string;
  modelName: string;
  /** Prefix-cache semantics: `vllm`, `sglang` or `llamacpp` (SimConfig.cache_semantics). */
  cacheSemantics?: string;
  /** Simulated engines behind the port. @default 1 */
  replicas?: number;
  /** How the router picks a replica. @default 'round-robin' */
  router?: RouterKind;
}

function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535.');
  return n;
}

function replicaCount(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1 || n > MAX_REPLICAS) throw new InvalidArgumentError(`expected a whole number of replicas from 1 to ${MAX_REPLICAS}.`);
  return n;
}

function routerKind(value: string): RouterKind {
  const kind = ROUTER_KINDS.find((k) => k === value);
  if (kind === undefined) throw new InvalidArgumentError(`expected ${ROUTER_KINDS.join(', ')}.`);
  return kind;
}

function seedNumber(value: string): number {
  const n = Number(value);
  if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected an integer.');
  return n;
}

/** Reads and validates a `--config sim.json` file. ConfigError naming the file (and the key) when it is unusable. */
export async function readSimConfigFile(path: string): Promise<Partial<SimConfig>> {
  await statInputFile(path, (why, cause) => new ConfigError(`--config ${path}: ${why}`, { cause }));
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--config ${path}: cannot read the file: ${(error as Error).message}`, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`--config ${path}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return parseSimConfigOverrides(value, `--config ${path}`);
}

/**
 * Runs `chatload serve` until `signal` aborts: starts the simulator in this thread, prints one line with its URL,
 * then closes it (open streams ended, trace flushed) and resolves.
 */
export async function runServe(options: ServeCliOptions, signal: AbortSignal, print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<void> {
  checkServeOptions(options);
  // A trace that cannot be written is a bad flag, found before the server listens (issue #35), not a failure later.
  if (options.trace !== undefined) prepareOutputFile('--trace', options.trace);
  const file = options.config === undefined ? {} : await readSimConfigFile(options.config);
  // --cache-semantics wins over the file's key; both are validated with the rest (one ConfigError naming the key).
  const config = options.cacheSemantics === undefined ? file : parseSimConfigOverrides({ ...file, cache_semantics: options.cacheSemantics }, '--cache-semantics');
  const sim = await startSimulator({
    host: options.host,
    port: options.port,
    profile: options.profile,
    config,
    seed: options.seed,
    faults: options.faults,
    tracePath: options.trace,
    modelName: options.modelName,
    tokenizer: options.tokenizer === 'approx' ? undefined : options.tokenizer,
    replicas: options.replicas,
    router: options.router,
  });
  const fleet = (options.replicas ?? 1) === 1 ? '' : `, ${options.replicas} replicas behind a ${options.router ?? 'round-robin'} router`;
  print(`chatload serve: listening on ${sim.url} (profile ${options.profile}, model ${options.modelName}${fleet})`);
  if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  await sim.close();
}

/** Adds `chatload serve` (the built-in simulated OpenAI-compatible server) to `program`. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description(COMMAND_DESCRIPTIONS.serve)
    .addHelpText('after', examplesText('serve'))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', portNumber, 8000)
    .option('--profile <name>', `engine profile: ${Object.keys(profiles).join(', ')}`, 'h100-8b')
    .option('--config <file>', 'JSON file of engine parameter overrides (see docs/SIMULATOR.md)')
    .option('--tokenizer <name>', "tokenizer for prompt accounting: approx, tiktoken:cl100k_base|o200k_base, a tokenizer.json or model folder, or a Hugging Face model id", 'approx')
    .option('--seed <n>', 'seed for generated text, the EOS model and faults', seedNumber, 0)
    .option('--faults <spec>', 'fault injection, e.g. 500=0.01,429=0.02:2,reset=0.01 (kinds: 500 429 reset stall trickle malformed truncate)')
    .option('--trace <file>', 'write one JSONL line per request to this file')
    .option('--model-name <name>', 'model name to serve', DEFAULT_MODEL_NAME)
    .option('--replicas <n>', `simulated engines behind the one port, each with its own KV cache and scheduler (1-${MAX_REPLICAS}); each response names its replica in the x-chatload-replica header`, replicaCount, 1)
    .option('--router <kind>', `how each request's replica is picked: ${ROUTER_KINDS.join(', ')} (sticky follows the X-Session-ID header; docs/SIMULATOR.md)`, routerKind, 'round-robin')
    .option('--cache-semantics <engine>', "prefix-cache semantics: vllm (a block shared from the step it is scheduled in), sglang (once that step is done) or llamacpp (token by token, shared once a request ends; docs/ENGINES.md)")
    .action(async (options: ServeCliOptions) => {
      const controller = new AbortController();
      const removeHandlers = onStopSignals(() => controller.abort());
      try {
        await runServe(options, controller.signal);
      } finally {
        removeHandlers();
      }
    });
}
