/**
 * chatload's library API: run a benchmark, start a simulator, load a dataset, and the building blocks the CLI uses.
 *
 * @example
 * import { startSimulator, runBenchmark } from 'chatload';
 * const sim = await startSimulator({ profile: 'cpu-tiny' });
 * const result = await runBenchmark({ url: sim.url, numClients: 4, maxNumRequests: 100, outputDir: 'out', overwrite: true });
 * console.log(result.summary.metrics.ttft_ms?.p50);
 * await sim.close();
 */
export { runBenchmark, type BenchmarkHooks, type BenchmarkResult, type BenchmarkStartInfo } from './benchmark/run-benchmark.js';
export { normalizeRunOptions, RUN_OPTIONS, type RunOptions, type RunOptionsInput } from './options/run-options.js';
export { planRun, type RunPlan } from './options/run-plan.js';
export { runLoad, type ConversationCounts, type LoadInput, type LoadObserver, type LoadResult, type StopReason } from './load/index.js';
export { loadConversations, loadDataset, demoConversations, validateConversation, SIZE_BOUNDS, type Conversation, type LoadOptions, type SizeBounds } from './conversation/index.js';
export { startSimulator, startSimulatorWorker, type RunningSimulator, type SimulatorOptions } from './sim/index.js';
export { ChatClient, type ChatClientOptions, type ModelInfo } from './client/chat-client.js';
export type { ChatRequest, StreamResult, ErrorKind, RequestError } from './client/types.js';
export type { RequestRecord } from './metrics/record.js';
export { summarize, summarizePerTurn, RunAggregate, type RunAggregateOptions, type Summary, type TurnSummary, type Stats } from './metrics/index.js';
export { ChatloadError, ConfigError, DatasetError, ServerUnreachableError, ExitCode } from './errors/index.js';
export { approxTokenizer, chatmlTemplate, defaultTokenCounter, countPromptTokens, type Tokenizer, type ChatTemplate } from './tokenizer/index.js';
