// One loopback test server per serving engine, each reproducing what chatload's engine detection, /metrics scraping
// and --reset-prefix-cache meet on the real one: its /v1/models `owned_by`, its version endpoint, its /metrics text
// (the real names and label shapes, read from each engine's source; see docs/ENGINES.md) and its cache-reset
// endpoints. Counters start from earlier traffic, so only deltas are right.
import type { ServerResponse } from 'node:http';
import { family, sendJson, sendText, startEngineServer, type EngineRequest, type EngineServer, type EngineServerOptions, type ServedCounts } from './engine-server-core.js';

/** Tokens an engine had counted before the test's run (so a scraper that forgets the "before" reads wrong). */
const EARLIER = { prompt: 5000, cached: 1200, generated: 800 };

function route(request: EngineRequest, method: string, path: string): boolean {
  return request.method === method && request.url.split('?')[0] === path;
}

/**
 * vLLM (`vllm serve`, V1 engine): /v1/models says `owned_by: "vllm"` with `max_model_len`; `GET /version` answers
 * `{"version": ...}`; /metrics is prometheus_client's layout (`# TYPE vllm:prefix_cache_queries counter` with a
 * `..._total` and a `..._created` sample, labels `engine` and `model_name`); `POST /reset_prefix_cache` exists only
 * with VLLM_SERVER_DEV_MODE=1 (404 otherwise); uvicorn adds `server: uvicorn`. With `tokenize`, `POST /tokenize`
 * (at the root, vllm/entrypoints/serve/tokenize/api_router.py) answers `{count, max_model_len, tokens}` for a body with
 * `messages` (and `tools`, `add_generation_prompt`) or `prompt`, as that function renders and encodes it.
 */
export function startVllmServer(options: EngineServerOptions & { devMode?: boolean; tokenize?: (body: Record<string, unknown>) => number[] } = {}): Promise<EngineServer> {
  const model = options.model ?? 'test-model';
  const labels = `engine="0",model_name="${model}"`;
  const counter = (name: string, help: string, value: number): string =>
    family(name, 'counter', help, [`${name}_total{${labels}} ${value.toFixed(1)}`, `${name}_created{${labels}} 1.7500000e+09`]);
  return startEngineServer(
    options,
    (request, res, served) => {
      if (route(request, 'GET', '/v1/models')) {
        sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'vllm', root: model, parent: null, max_model_len: 32768 }] });
      } else if (route(request, 'GET', '/version')) {
        sendJson(res, 200, { version: '0.11.0' });
      } else if (route(request, 'GET', '/metrics')) {
        sendText(
          res,
          200,
          family('python_gc_objects_collected_total', 'counter', 'Objects collected during gc', ['python_gc_objects_collected_total{generation="0"} 812.0']) +
            family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [`vllm:num_requests_running{${labels}} 0.0`]) +
            family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [`vllm:num_requests_waiting{${labels}} 0.0`]) +
            family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', [`vllm:kv_cache_usage_perc{${labels}} 0.125`]) +
            counter('vllm:prefix_cache_queries', 'Prefix cache queries, in terms of number of queried tokens.', EARLIER.prompt + served.promptTokens) +
            counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.', EARLIER.cached + served.cachedTokens) +
            counter('vllm:prompt_tokens', 'Number of prefill tokens processed.', EARLIER.prompt + served.promptTokens) +
            counter('vllm:generation_tokens', 'Number of generation tokens processed.', EARLIER.generated + served.generatedTokens),
        );
      } else if (route(request, 'POST', '/tokenize') && options.tokenize !== undefined) {
        const tokens = options.tokenize(JSON.parse(request.body) as Record<string, unknown>);
        sendJson(res, 200, { count: tokens.length, max_model_len: 32768, tokens, token_strs: null });
      } else if (route(request, 'POST', '/reset_prefix_cache') && options.devMode !== false) {
        res.writeHead(200, { 'content-length': 0 }).end();
      } else return false;
      return true;
    },
    { server: 'uvicorn' },
  );
}

/**
 * SGLang (`python -m sglang.launch_server --enable-metrics`): /v1/models says `owned_by: "sglang"`; no /version, the
 * version is in `GET /server_info` (and the deprecated `/get_server_info`) among the server args; /metrics in
 * prometheus_client's multiprocess layout, `sglang:cached_tokens_total` split by a `cache_source` label;
 * `POST /flush_cache` answers 200, or 400 while requests are running or waiting (`busy`). With `tokenize`,
 * `POST /v1/tokenize` answers `{tokens, count, max_model_len}` for `messages` or `prompt`
 * (python/sglang/srt/entrypoints/openai/serving_tokenize.py, TokenizeResponse).
 */
export function startSglangServer(options: EngineServerOptions & { busy?: boolean; pageSize?: number; tokenize?: (body: Record<string, unknown>) => number[] } = {}): Promise<EngineServer> {
  const model = options.model ?? 'test-model';
  const labels = `model_name="${model}",engine_type="unified",tp_rank="0",pp_rank="0"`;
  const counter = (name: string, help: string, samples: readonly [string, number][]): string =>
    family(name, 'counter', help, samples.map(([extra, value]) => `${name}_total{${labels}${extra}} ${value.toFixed(1)}`));
  return startEngineServer(options, (request, res, served) => {
    if (route(request, 'GET', '/v1/models')) {
      sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'sglang', root: model, max_model_len: 32768 }] });
    } else if (route(request, 'GET', '/server_info') || route(request, 'GET', '/get_server_info')) {
      // `page_size` is a top-level server arg there (python/sglang/srt/server_args.py; default 1, radix-cache pages).
      const pageSize = options.pageSize === undefined ? {} : { page_size: options.pageSize };
      sendJson(res, 200, { model_path: model, tp_size: 1, enable_metrics: true, ...pageSize, internal_states: [{ last_gen_throughput: 0 }], version: '0.5.2' });
    } else if (route(request, 'GET', '/metrics')) {
      // Cached tokens by where they came from: three quarters from GPU memory, the rest from host memory.
      const device = Math.round((EARLIER.cached + served.cachedTokens) * 0.75);
      sendText(
        res,
        200,
        counter('sglang:prompt_tokens', 'Number of prefill tokens processed.', [['', EARLIER.prompt + served.promptTokens]]) +
          counter('sglang:generation_tokens', 'Number of generation tokens processed.', [['', EARLIER.generated + served.generatedTokens]]) +
          counter('sglang:cached_tokens', 'Number of cached prompt tokens by source (device/host/storage).', [
            [',cache_source="device"', device],
            [',cache_source="host"', EARLIER.cached + served.cachedTokens - device],
          ]) +
          family('sglang:num_running_reqs', 'gauge', 'The number of running requests.', [`sglang:num_running_reqs{${labels}} 0.0`]) +
          family('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', [`sglang:num_queue_reqs{${labels}} 0.0`]) +
          family('sglang:token_usage', 'gauge', 'The token usage.', [`sglang:token_usage{${labels}} 0.25`]) +
          family('sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.', [`sglang:cache_hit_rate{${labels}} 0.3`]),
      );
    } else if (route(request, 'POST', '/v1/tokenize') && options.tokenize !== undefined) {
      const tokens = options.tokenize(JSON.parse(request.body) as Record<string, unknown>);
      sendJson(res, 200, { tokens, count: tokens.length, max_model_len: 32768 });
    } else if ((route(request, 'POST', '/flush_cache') || route(request, 'GET', '/flush_cache')) && options.busy === true) {
      sendText(res, 400, 'Flush cache failed: there are running or waiting requests.\n');
    } else if (route(request, 'POST', '/flush_cache') || route(request, 'GET', '/flush_cache')) {
      sendText(res, 200, 'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n');
    } else return false;
    return true;
  });
}

/** What the llama.cpp server was started with, and what its slot erases did. */
export interface LlamaCppServer extends EngineServer {
  /** Slot ids erased so far, in order. */
  erased: number[];
}

/** llama.cpp's error body for a disabled endpoint (format_error_response, ERROR_TYPE_NOT_SUPPORTED). */
function notSupported(res: ServerResponse, message: string): void {
  sendJson(res, 501, { error: { code: 501, message, type: 'not_supported_error' } });
}

/**
 * llama.cpp's llama-server: `Server: llama.cpp` on every answer; /v1/models says `owned_by: "llamacpp"`; `GET /props`
 * has `build_info`; /metrics (only with `--metrics`, else 501) has bare `llamacpp:*` names where
 * `prompt_tokens_total` EXCLUDES the cached tokens, counted in `prompt_tokens_cached_total`; `GET /slots` lists the
 * slots (501 with `--no-slots`); `POST /slots/{id}?action=erase` empties one slot's cache, but every slot action is 501
 * without `--slot-save-path`.
 */
export async function startLlamaCppServer(
  options: EngineServerOptions & { metrics?: boolean; slots?: boolean; slotSavePath?: boolean; parallel?: number } = {},
): Promise<LlamaCppServer> {
  const model = options.model ?? 'test-model';
  const parallel = options.parallel ?? 2;
  const erased: number[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number): string => family(`llamacpp:${name}`, type, help, [`llamacpp:${name} ${value}`]);
  const server = await startEngineServer(
    options,
    (request, res, served: ServedCounts) => {
      const path = request.url.split('?')[0]!;
      if (route(request, 'GET', '/v1/models')) {
        const meta = { vocab_type: 2, n_vocab: 151936, n_ctx_train: 40960, n_embd: 1024, n_params: 596049920, size: 484220928 };
        sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'llamacpp', meta }] });
      } else if (route(request, 'GET', '/props')) {
        sendJson(res, 200, { default_generation_settings: { n_ctx: 4096 }, total_slots: parallel, model_path: `/models/${model}.gguf`, build_info: 'b6500-1a2b3c4d' });
      } else if (route(request, 'GET', '/metrics')) {
        if (options.metrics === false) notSupported(res, 'This server does not support metrics endpoint. Start it with `--metrics`');
        else {
          sendText(
            res,
            200,
            metric('prompt_tokens_total', 'counter', 'Number of prompt tokens processed, excluding cached tokens', EARLIER.prompt - EARLIER.cached + served.promptTokens - served.cachedTokens) +
              metric('prompt_tokens_cached_total', 'counter', 'Number of prompt tokens reused from the cache', EARLIER.cached + served.cachedTokens) +
              metric('prompt_seconds_total', 'counter', 'Total time spent processing prompts', 1.25) +
              metric('tokens_predicted_total', 'counter', 'Number of generation tokens processed', EARLIER.generated + served.generatedTokens) +
              metric('tokens_predicted_seconds_total', 'counter', 'Total time spent generating tokens', 3.5) +
              metric('n_decode_total', 'counter', 'Total number of llama_decode() calls', 900) +
              metric('prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s', 812.5) +
              metric('predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s', 41.5) +
              metric('requests_processing', 'gauge', 'Number of requests processing', 0) +
              metric('requests_deferred', 'gauge', 'Number of requests deferred', 0) +
              metric('n_busy_slots_per_decode', 'gauge', 'Average number of busy slots per llama_decode() call', 1),
          );
        }
      } else if (route(request, 'GET', '/slots')) {
        if (options.slots === false) notSupported(res, 'This server does not support slots endpoint. Start it with `--slots`');
        else sendJson(res, 200, Array.from({ length: parallel }, (_, id) => ({ id, n_ctx: 4096, speculative: false, is_processing: false })));
      } else if (request.method === 'POST' && /^\/slots\/\d+$/.test(path)) {
        const id = Number(path.slice('/slots/'.length));
        if (options.slotSavePath === false) notSupported(res, 'This server does not support slots action. Start it with `--slot-save-path`');
        else if (new URLSearchParams(request.url.split('?')[1] ?? '').get('action') !== 'erase') sendJson(res, 400, { error: { code: 400, message: 'Invalid action', type: 'invalid_request_error' } });
        else {
          erased.push(id);
          sendJson(res, 200, { id_slot: id, n_erased: 120 });
        }
      } else return false;
      return true;
    },
    { server: 'llama.cpp' },
  );
  return Object.assign(server, { erased });
}

/**
 * Hugging Face TGI (`text-generation-launcher`): /v1/models says `owned_by: <the model id>`, not a server name;
 * `GET /info` has `router: "text-generation-router"` and `version`; /metrics (metrics-exporter-prometheus) has `tgi_*`
 * names, token counts as histograms, and no prefix-cache counter; there is no cache-reset endpoint; usage reports no
 * cached tokens.
 */
export function startTgiServer(options: EngineServerOptions = {}): Promise<EngineServer> {
  const model = options.model ?? 'test-model';
  const histogram = (name: string, help: string, sum: number, count: number): string =>
    family(name, 'histogram', help, [`${name}_bucket{le="100"} 0`, `${name}_bucket{le="+Inf"} ${count}`, `${name}_sum ${sum}`, `${name}_count ${count}`]);
  return startEngineServer({ ...options, reportCached: false }, (request, res, served) => {
    if (route(request, 'GET', '/v1/models')) {
      sendJson(res, 200, { object: 'list', id: '', created: 0, owned_by: '', data: [{ id: model, object: 'model', created: 0, owned_by: model }] });
    } else if (route(request, 'GET', '/info')) {
      sendJson(res, 200, {
        model_id: model, model_sha: null, model_pipeline_tag: 'text-generation', max_concurrent_requests: 128, max_best_of: 2, max_stop_sequences: 4,
        max_input_tokens: 4095, max_total_tokens: 4096, validation_workers: 2, max_client_batch_size: 4,
        router: 'text-generation-router', version: '3.3.6', sha: null, docker_label: null,
      });
    } else if (route(request, 'GET', '/metrics')) {
      const requests = 40 + served.requests;
      sendText(
        res,
        200,
        family('tgi_request_count', 'counter', 'Total number of requests', [`tgi_request_count ${requests}`]) +
          family('tgi_request_success', 'counter', 'Number of successful requests', [`tgi_request_success ${requests}`]) +
          family('tgi_queue_size', 'gauge', 'Current queue size', ['tgi_queue_size 0']) +
          family('tgi_batch_current_size', 'gauge', 'Current batch size', ['tgi_batch_current_size 0']) +
          histogram('tgi_request_input_length', 'Input tokens per request', EARLIER.prompt + served.promptTokens, requests) +
          histogram('tgi_request_generated_tokens', 'Generated tokens per request', EARLIER.generated + served.generatedTokens, requests),
      );
    } else return false;
    return true;
  });
}

/**
 * No engine chatload knows: an OpenAI-compatible proxy in front of one (LiteLLM-like), which says `owned_by:
 * "openai"`, publishes only its own `process_*`/`python_*` metrics and has no cache-reset endpoint (unless
 * `flushCache`, then SGLang's `/flush_cache` answers).
 */
export function startProxyServer(options: EngineServerOptions & { flushCache?: boolean } = {}): Promise<EngineServer> {
  const model = options.model ?? 'test-model';
  return startEngineServer(options, (request, res) => {
    if (route(request, 'GET', '/v1/models')) {
      sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 1677610602, owned_by: 'openai' }] });
    } else if (route(request, 'GET', '/metrics')) {
      sendText(
        res,
        200,
        family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', ['process_resident_memory_bytes 2.1e+08']) +
          family('python_info', 'gauge', 'Python platform information', ['python_info{implementation="CPython",major="3",minor="12"} 1.0']),
      );
    } else if (route(request, 'POST', '/flush_cache') && options.flushCache === true) {
      sendText(res, 200, 'Cache flushed.\n');
    } else return false;
    return true;
  });
}
