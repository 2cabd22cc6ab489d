import { answered, headerOf, jsonOf, ProbeHttp, type ProbeAnswer, type ProbeFailure } from './probe.js';
import { ENGINE_NAMES, ENGINE_PROFILES, type EngineName } from './profiles.js';

/** The serving engine behind the URL, as results.json records it (`engine`). */
export interface EngineInfo {
  name: EngineName;
  /** The engine's version (vLLM /version, SGLang /server_info, llama.cpp /props build_info, TGI /info), when it said. */
  version: string | null;
  /** The evidence that named it, e.g. `GET /v1/models: owned_by "vllm"`; empty for `unknown`. */
  detected_by: string[];
}

/** Options of {@link probeEngine}. */
export interface DetectEngineOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (no `/v1`). */
  rootUrl: string;
  /** Auth and --header, sent with every probe. */
  headers?: Readonly<Record<string, string>>;
  /** The /metrics page to look at (--scrape-metrics URL). @default `<rootUrl>/metrics` */
  metricsUrl?: string;
  /**
   * The answer to GET <rootUrl>/v1/models already read (the run's readiness check, `ChatClient.modelsAnswer`): used
   * as it is, so the server is not asked twice. @default asked here, with the other probes
   */
  models?: ProbeAnswer;
  /** Longest wait for one probe (ms). @default 2000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One clue: which engine it points to, how strongly, and how it reads in `detected_by`. */
export interface EngineClue {
  engine: EngineName;
  /** 3 the server naming itself, 2 a name only that engine uses, 1 a hint others share. */
  weight: number;
  evidence: string;
}

/** The answers detection looks at (a probe that failed or was not sent is undefined). */
export interface DetectionAnswers {
  models?: ProbeAnswer;
  version?: ProbeAnswer;
  metrics?: ProbeAnswer;
  info?: ProbeAnswer;
  props?: ProbeAnswer;
}

/** `owned_by` values an engine writes for itself in /v1/models (each verified in the engine's source). */
const OWNED_BY: Readonly<Record<string, EngineName>> = { vllm: 'vllm', sglang: 'sglang', llamacpp: 'llamacpp', chatload: 'chatload-sim' };

/** The /metrics name prefixes only one engine uses: each profile's (profiles.ts), in ENGINE_NAMES' order. */
const METRIC_PREFIXES: readonly [string, EngineName][] = ENGINE_NAMES.flatMap((name) => {
  const prefix = ENGINE_PROFILES[name].metricPrefix;
  return prefix === null ? [] : [[prefix, name] as [string, EngineName]];
});

/** NVIDIA Dynamo's frontend's /metrics prefix (its profile's: lib/runtime/src/metrics/prometheus_names.rs). */
const DYNAMO_FRONTEND_PREFIX = ENGINE_PROFILES.dynamo.metricPrefix!;

/** What {@link probeEngine} found: the engine, and the /metrics page it read (undefined when that probe got no answer). */
export interface EngineProbe {
  engine: EngineInfo;
  metrics: ProbeAnswer | undefined;
  /** llama.cpp's GET /props (its slots) and SGLang's GET /server_info (its page size), when they answered. */
  props: ProbeAnswer | undefined;
  serverInfo: ProbeAnswer | undefined;
  /**
   * NVIDIA Dynamo's frontend answers at the URL (its `dynamo_frontend_*` names on the /metrics page read, or on the
   * root's /metrics when --scrape-metrics points at another page, a worker's): the engine may then be its workers'.
   */
  dynamoFrontend: boolean;
}

/**
 * Finds out which engine serves `rootUrl`, with a few bounded GETs sent at once (/v1/models unless `models` gives its
 * answer, /version, /metrics, /info, /props, the root's /metrics too when the page read is another; then /server_info
 * for SGLang's version). Never throws and never fails the run: with no clue the engine is `unknown`. Sends GETs only.
 * Also gives the /metrics page it read, so that a run reads the server's KV capacity from it rather than asking again.
 */
export async function probeEngine(options: DetectEngineOptions): Promise<EngineProbe> {
  const http = new ProbeHttp({ rootUrl: options.rootUrl, headers: options.headers, timeoutMs: options.timeoutMs, signal: options.signal });
  try {
    const ok = (result: ProbeAnswer | ProbeFailure): ProbeAnswer | undefined => (answered(result) ? result : undefined);
    const models = options.models ?? http.get('/v1/models');
    // The root's own page too when --scrape-metrics names another (a Dynamo frontend's workers' pages), never twice.
    const metricsPath = options.metricsUrl ?? '/metrics';
    const rootPage = http.url(metricsPath) === http.url('/metrics') ? [] : ['/metrics'];
    const [modelsAnswer, version, metrics, info, props, root] = (
      await Promise.all([models, ...['/version', metricsPath, '/info', '/props', ...rootPage].map((path) => http.get(path))])
    ).map(ok);
    const answers: DetectionAnswers = { models: modelsAnswer, version, metrics, info, props };
    const clues = collectClues(answers);
    const name = pickEngine(clues);
    let engineVersion = versionOf(name, answers);
    let serverInfo: ProbeAnswer | undefined;
    if (name === 'sglang') {
      // /server_info is the current name, /get_server_info the deprecated one older releases have. Also read for the
      // page size (server-engine/cache-semantics.ts).
      const [current, deprecated] = (await Promise.all([http.get('/server_info'), http.get('/get_server_info')])).map(ok);
      engineVersion ??= jsonVersion(current) ?? jsonVersion(deprecated);
      serverInfo = current?.status === 200 ? current : deprecated;
    }
    const detectedBy = clues.filter((c) => c.engine === name).map((c) => c.evidence);
    const dynamoFrontend = name === 'dynamo' || (root?.status === 200 && metricNames(root.text).some((n) => n.startsWith(DYNAMO_FRONTEND_PREFIX)));
    if (dynamoFrontend && name !== 'dynamo') detectedBy.push(`in front: NVIDIA Dynamo's frontend (GET /metrics: ${DYNAMO_FRONTEND_PREFIX}* names)`);
    return { engine: { name, version: engineVersion, detected_by: detectedBy }, metrics, props, serverInfo, dynamoFrontend };
  } finally {
    await http.close();
  }
}

/** Every clue in the answers. Pure: tests feed it answers directly. */
export function collectClues(answers: DetectionAnswers): EngineClue[] {
  const clues: EngineClue[] = [];
  const models = answers.models?.status === 200 ? jsonOf(answers.models) : undefined;
  const entries = Array.isArray((models as { data?: unknown } | undefined)?.data) ? ((models as { data: unknown[] }).data) : [];
  for (const entry of entries) {
    const { id, owned_by: ownedBy } = (entry ?? {}) as { id?: unknown; owned_by?: unknown };
    if (typeof ownedBy !== 'string') continue;
    const engine = OWNED_BY[ownedBy.toLowerCase()];
    if (engine !== undefined) clues.push({ engine, weight: 3, evidence: `GET /v1/models: owned_by "${ownedBy}"` });
    // TGI writes the model id where others write their own name (router/src/server.rs).
    else if (ownedBy === id) clues.push({ engine: 'tgi', weight: 1, evidence: 'GET /v1/models: owned_by equals the model id' });
    break; // one entry says it; a router listing many models says the same on each
  }
  for (const answer of [answers.models, answers.version, answers.metrics, answers.info, answers.props]) {
    if (answer !== undefined && /llama\.cpp/i.test(headerOf(answer, 'server'))) {
      clues.push({ engine: 'llamacpp', weight: 2, evidence: `server header "${headerOf(answer, 'server')}"` });
      break;
    }
  }
  if (answers.version?.status === 200 && jsonVersion(answers.version) !== null) {
    clues.push({ engine: 'vllm', weight: 1, evidence: 'GET /version: {"version": …}' });
  }
  if (answers.metrics?.status === 200) {
    const names = metricNames(answers.metrics.text);
    for (const [prefix, engine] of METRIC_PREFIXES) {
      if (names.some((name) => name.startsWith(prefix))) clues.push({ engine, weight: 2, evidence: `GET /metrics: ${prefix}* names` });
    }
  }
  const info = answers.info?.status === 200 ? (jsonOf(answers.info) as Record<string, unknown> | undefined) : undefined;
  if (info?.router === 'text-generation-router') clues.push({ engine: 'tgi', weight: 3, evidence: 'GET /info: router "text-generation-router"' });
  else if (typeof info?.model_id === 'string' && typeof info.max_total_tokens === 'number') clues.push({ engine: 'tgi', weight: 2, evidence: 'GET /info: model_id and max_total_tokens' });
  const props = answers.props?.status === 200 ? (jsonOf(answers.props) as Record<string, unknown> | undefined) : undefined;
  if (typeof props?.build_info === 'string' && 'default_generation_settings' in props) {
    clues.push({ engine: 'llamacpp', weight: 2, evidence: 'GET /props: build_info and default_generation_settings' });
  }
  return clues;
}

/** The engine with the most weight; ties go to the earlier one in ENGINE_NAMES; no clue is `unknown`. */
export function pickEngine(clues: readonly EngineClue[]): EngineName {
  let best: EngineName = 'unknown';
  let bestWeight = 0;
  for (const engine of ENGINE_NAMES) {
    const weight = clues.filter((c) => c.engine === engine).reduce((sum, c) => sum + c.weight, 0);
    if (weight > bestWeight) {
      best = engine;
      bestWeight = weight;
    }
  }
  return best;
}

/** The version `engine` reported in the answers, from the endpoint that engine uses for it. */
function versionOf(engine: EngineName, answers: DetectionAnswers): string | null {
  switch (engine) {
    case 'vllm':
    case 'chatload-sim':
      return jsonVersion(answers.version);
    case 'tgi':
      return jsonVersion(answers.info);
    case 'llamacpp': {
      const props = answers.props?.status === 200 ? (jsonOf(answers.props) as { build_info?: unknown } | undefined) : undefined;
      return typeof props?.build_info === 'string' ? props.build_info : null;
    }
    default:
      return null;
  }
}

/** The string `version` of a 200 JSON answer, or null. */
function jsonVersion(answer: ProbeAnswer | undefined): string | null {
  if (answer?.status !== 200) return null;
  const version = (jsonOf(answer) as { version?: unknown } | undefined)?.version;
  return typeof version === 'string' && version.length > 0 && version.length < 100 ? version : null;
}

/** Metric names in Prometheus text (sample lines and `# TYPE` lines); none for a body that is not the format. */
function metricNames(text: string): string[] {
  const names = new Set<string>();
  for (const line of text.split('\n', 20_000)) {
    const match = /^(?:# TYPE )?([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[\s{]|$)/.exec(line);
    if (match !== null) names.add(match[1]!);
  }
  return [...names];
}
