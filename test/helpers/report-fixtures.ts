// Results directories for report tests (not a test file: the runner's glob is test/*/*.test.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarizePerTurn } from '../../src/metrics/per-turn.js';
import type { RequestRecord } from '../../src/metrics/record.js';
import { summarize, summarizeWarmupPercentages } from '../../src/metrics/summary.js';
import { buildResultsDocument, type ResultsExtra } from '../../src/store/results-json.js';
import { writeJsonAtomic } from '../../src/store/atomic-write.js';

/** Text a hostile model, dataset or server could put into a run's files. */
export const XSS = '<script>window.__pwned=1</script>"><img src=x onerror="window.__pwned=2">';

/** Options of syntheticRun: conversations × turns, a latency scale, which requests fail, text to put in every text field. */
export interface SyntheticRunOptions {
  conversations?: number;
  turns?: number;
  /** Multiplies every latency (ms). Default 1. */
  latencyScale?: number;
  /** Every `failEvery`-th request fails (http_status 500). Default 7; 0 = none. */
  failEvery?: number;
  /** Appended to conversation ids, error messages and finish reasons (e.g. an XSS payload). */
  text?: string;
}

/**
 * Deterministic records of a closed-loop run: conversation c's turn t is sent at c*50 + (t-1)*400 ms; prompts grow with
 * the turn, cached tokens follow the previous turn's prompt + answer minus a little, a few requests fail.
 */
export function syntheticRecords(options: SyntheticRunOptions = {}): RequestRecord[] {
  const conversations = options.conversations ?? 6;
  const turns = options.turns ?? 4;
  const scale = options.latencyScale ?? 1;
  const failEvery = options.failEvery ?? 7;
  const text = options.text ?? '';
  const records: RequestRecord[] = [];
  let n = 0;
  for (let c = 0; c < conversations; c++) {
    let previous = 0;
    for (let t = 1; t <= turns; t++) {
      n++;
      const sent = c * 50 + (t - 1) * 400;
      const ttft = (20 + t * 5 + (c % 3)) * scale;
      const out = 20 + ((c + t) % 5);
      const itl = Array.from({ length: out - 1 }, (_, i) => (5 + ((i + c) % 4)) * scale);
      const e2el = ttft + itl.reduce((a, b) => a + b, 0);
      const input = 100 * t + 10 * c;
      const failed = failEvery > 0 && n % failEvery === 0;
      records.push({
        conversation_id: `conv-${c}${text}`,
        conversation_index: c,
        turn: t,
        client_id: c % 3,
        warmup: false,
        retries: 0,
        start_time_ms: 1_700_000_000_000 + sent,
        sent_at_ms: sent,
        first_token_at_ms: sent + ttft,
        done_at_ms: sent + e2el,
        ttft_ms: ttft,
        ttft_content_ms: ttft,
        ttft_reasoning_ms: null,
        tpot_ms: (e2el - ttft) / (out - 1),
        itl_ms: itl,
        e2el_ms: e2el,
        latency_ms: e2el,
        input_num_tokens: input,
        input_tokens_source: 'server',
        output_num_tokens: out,
        output_tokens_source: 'server',
        cached_tokens: Math.max(0, previous - 16),
        expected_cached_tokens: previous,
        expected_cached_tokens_infinite: previous,
        expected_cached_tokens_own_history: previous,
        input_num_turns: 2 * t - 1,
        output_num_chunks: out,
        output_num_first_chunk_tokens: 1,
        approx_cached_percent: 50,
        max_tokens: out,
        finish_reason: `length${text}`,
        status: failed ? 'error' : 'ok',
        error_kind: failed ? 'http_status' : null,
        error: failed ? `HTTP 500: injected fault${text}` : null,
        http_status: failed ? 500 : 200,
        // Open-loop fields (closed loop here: no schedule).
        scheduled_at_ms: null,
        schedule_lag_ms: null,
        queue_ms: 0,
        ttft_from_scheduled_ms: null,
        e2el_from_scheduled_ms: null,
      } as unknown as RequestRecord);
      previous = input + out;
    }
  }
  return records;
}

/** Writes requests.jsonl (and results.json unless `finished` is false) for these records into `dir`. */
export function writeRunDir(
  dir: string,
  records: readonly RequestRecord[],
  options: { finished?: boolean; model?: string; config?: Record<string, unknown>; warnings?: string[] } = {},
): void {
  writeFileSync(join(dir, 'requests.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  if (options.finished === false) return;
  const summary = summarize(records);
  writeJsonAtomic(
    join(dir, 'results.json'),
    buildResultsDocument({
      config: options.config ?? { numClients: 3, url: 'http://127.0.0.1:8000', apiKey: '[redacted]' },
      summary,
      warmupPercentages: summarizeWarmupPercentages(records, [0]),
      perTurn: summarizePerTurn(records),
      clientHealth: {
        event_loop_delay_ms: { p50: 0.2, p99: 1.5, max: 3, mean: 0.3 },
        cpu_user_ms: 100,
        cpu_system_ms: 20,
        cpu_percent_of_one_core: 12,
        wall_ms: 1000,
        max_rss_mb: 80,
        bottleneck: false,
        warnings: [],
      },
      conversations: { total: 6, completed: 5, failed: 1, dropped: 0, unfinished: 0, not_started: 0 },
      extra: {
        model: options.model ?? 'test-model',
        dataset: 'synthetic',
        stop_reason: 'completed',
        warnings: options.warnings ?? [],
      } as ResultsExtra,
    }),
  );
}
