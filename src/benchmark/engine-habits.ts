import { withWorkerIdAsked } from '../client/dynamo-worker.js';
import type { Summary } from '../metrics/summary.js';
import type { RequestPlan } from '../options/run-plan.js';
import type { EngineName } from '../server-engine/profiles.js';

/*
 * What the detected engine changes in the run's requests and in how their answers are read, beyond its /metrics
 * names (server-engine/profiles.ts): NVIDIA Dynamo's frontend, so far (docs/ENGINES.md).
 */

/**
 * The request template for `engine`. Against NVIDIA Dynamo every request asks for the worker that served it
 * (client/dynamo-worker.ts), and a usage without `prompt_tokens_details` reads as 0 cached tokens: its backends leave
 * the details out when the engine's cached tokens are 0 (`build_completion_usage`,
 * components/src/dynamo/common/utils/completion_usage.py), and the frontend passes on what they sent
 * (lib/llm/src/protocols/openai/chat_completions/delta.rs).
 */
export function requestPlanFor(request: RequestPlan, engine: EngineName): RequestPlan {
  if (engine !== 'dynamo') return request;
  return { ...request, extraBody: withWorkerIdAsked(request.extraBody), zeroCachedOmitted: true };
}

/**
 * A warning when the run's figures may mean less than they say for `engine`: Dynamo's backends leave
 * `prompt_tokens_details` out both for 0 cached tokens and when they do not count them, so a run in which no answer
 * carried any, though the model expected hits, may have read unknown counts as misses.
 */
export function engineWarning(engine: EngineName, summary: Summary): string | undefined {
  if (engine !== 'dynamo' || summary.total_cached_tokens > 0 || summary.total_expected_cached_tokens === 0) return undefined;
  return "no answer from NVIDIA Dynamo carried prompt_tokens_details, though the expected cache holds hits: Dynamo leaves them out when its workers' cached tokens are 0 and when they do not report them, so cached_tokens 0 here may be unknown rather than a miss (docs/ENGINES.md)";
}
