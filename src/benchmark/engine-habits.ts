import { withWorkerIdAsked } from '../client/dynamo-worker.js';
import type { Summary } from '../metrics/summary.js';
import type { RequestPlan } from '../options/run-plan.js';
import type { EngineProbe } from '../server-engine/detect.js';
import type { EngineName } from '../server-engine/profiles.js';

/*
 * What the detected engine changes in the run's requests and in how their answers are read, beyond its /metrics
 * names (server-engine/profiles.ts): NVIDIA Dynamo's frontend, so far (docs/ENGINES.md).
 */

/** What the habits below read of the detection: the engine, and whether NVIDIA Dynamo's frontend answers. */
export type DetectedServer = Pick<EngineProbe, 'engine' | 'dynamoFrontend'>;

/**
 * The request template for the detected server. Behind NVIDIA Dynamo's frontend (detected as the engine, or in front of
 * the engine a --scrape-metrics page names) every request asks for the worker that served it
 * (client/dynamo-worker.ts), and a usage without `prompt_tokens_details` reads as 0 cached tokens: its backends leave
 * the details out when the engine's cached tokens are 0 (`build_completion_usage`,
 * components/src/dynamo/common/utils/completion_usage.py), and the frontend passes on what they sent
 * (lib/llm/src/protocols/openai/chat_completions/delta.rs).
 */
export function requestPlanFor(request: RequestPlan, server: DetectedServer): RequestPlan {
  if (!server.dynamoFrontend) return request;
  return { ...request, extraBody: withWorkerIdAsked(request.extraBody), zeroCachedOmitted: true };
}

/**
 * The server flag that makes an engine's usage carry `prompt_tokens_details.cached_tokens`, off by default: vLLM's
 * (vllm/entrypoints/openai/cli_args.py) and SGLang's (python/sglang/srt/server_args.py, "Return number of cached
 * tokens in usage.prompt_tokens_details").
 */
const CACHE_REPORT_FLAG: Partial<Record<EngineName, string>> = { vllm: '--enable-prompt-tokens-details', sglang: '--enable-cache-report' };

/**
 * A warning when the run's figures may mean less than they say for `engine`:
 * - vLLM or SGLang answered every request without cached tokens: the server's flag that turns them on;
 * - Dynamo's backends leave `prompt_tokens_details` out both for 0 cached tokens and when they do not count them, so a
 *   run in which no answer carried any, though the model expected hits, may have read unknown counts as misses;
 * - Dynamo answered without any usage (its Responses API).
 */
export function engineWarning(server: DetectedServer, summary: Summary): string | undefined {
  const noneKnown = summary.completed > 0 && summary.cached_tokens_known === 0;
  if (!server.dynamoFrontend) {
    const flag = CACHE_REPORT_FLAG[server.engine.name];
    if (flag === undefined || !noneKnown) return undefined;
    return `no answer said how many of its prompt tokens came from the prefix cache: start the server with ${flag} for the per-request hit ratio and efficiency, or give --scrape-metrics for the server's own counters`;
  }
  if (noneKnown) {
    // A usage without details reads as 0 cached tokens behind Dynamo, so none known means no usage at all: its Responses
    // API builds each response with `usage: None`, and its stream carries no worker either
    // (lib/llm/src/protocols/openai/responses/stream_converter.rs, mod.rs).
    return "no answer from NVIDIA Dynamo carried a usage (its Responses API sends none, and streamed no worker id either): cached tokens are unknown and the hit ratio n/a; --endpoint chat reads them, and --scrape-metrics on the workers' pages gives the engine's counters";
  }
  if (summary.total_cached_tokens > 0 || summary.total_expected_cached_tokens === 0) return undefined;
  return "no answer from NVIDIA Dynamo carried prompt_tokens_details, though the expected cache holds hits: Dynamo leaves them out when its workers' cached tokens are 0 and when they do not report them, so cached_tokens 0 here may be unknown rather than a miss (docs/ENGINES.md)";
}
