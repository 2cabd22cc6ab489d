import { PrefixCacheTally, type PrefixCacheSummary, type SerializedPrefixCacheTally } from './prefix-cache-tally.js';
import { ReplicaTally, type ReplicaRow, type RoutingLoss, type SerializedReplicaTally } from './replica-tally.js';
import { AgenticTally, type AgenticSummary, type SerializedAgenticTally } from './agentic-tally.js';
import { FIXED_PERCENTILES, sortAscending } from './stats.js';
import { PeakBins, type Peaks, type SerializedPeakBins } from './peak-bins.js';
import { float64FromBase64, float64ToBase64, Float64Column } from './float64-column.js';
import { hasSlos, parseSlos, type Slos } from './goodput.js';
import { LatencyHistograms, type SerializedHistograms } from './histogram.js';
import { conversationStats, ConversationTally, type ConversationStats, type ConversationSummary, type SerializedConversation } from './per-conversation.js';
import { TurnTable, type SerializedTurn, type TurnSummary } from './per-turn.js';
import type { RequestRecord } from './record.js';
import { RecordLog, type SerializedRecordLog } from './record-log.js';
import { EXACT_ITL_LIMIT, SummaryBuilder, type SerializedSummaryBuilder } from './summary-builder.js';
import type { Summary } from './summary-types.js';
import { checkWarmupPercentages, droppedBy, warmupCuts, type WarmupCut } from './warmup-cuts.js';
import { WarmupSummaries } from './warmup-summaries.js';

/**
 * Records (count, warmup included) up to which a RunAggregate keeps what each one needs (RecordLog: 128 bytes a record
 * plus its gaps) and every statistic is exact, as a run's analysis always was up to this many. Past it, statistics
 * come from histograms (percentiles within 0.1%) and memory stays bounded whatever the count.
 */
export const EXACT_ANALYSIS_RECORDS = 100_000;

/**
 * How a RunAggregate that passes its exact limit moves the rows of its RecordLog into its histograms: a few per add(),
 * since all 100,000 at once would hold the event loop for a second in the middle of a run. Each add() moves at least
 * DRAIN_MIN_ROWS (so the log catches up) and at most DRAIN_MAX_ROWS, stopping once it has spent DRAIN_BUDGET_MS (the
 * first rows of each turn create that turn's histograms, ~0.1 ms each).
 */
const DRAIN_MIN_ROWS = 2;
const DRAIN_MAX_ROWS = 64;
const DRAIN_BUDGET_MS = 0.5;

/** What a RunAggregate summarizes with. Aggregates merge only with aggregates made with the same options. */
export interface RunAggregateOptions {
  /** --goodput objectives. */
  slos?: Slos;
  /** --warmup-percentages, each in [0, 100). @default [0] */
  warmupPercentages?: readonly number[];
  /** @default EXACT_ANALYSIS_RECORDS; Infinity keeps every statistic exact. */
  exactRecords?: number;
  /** Inter-token gaps pooled exactly. @default EXACT_ITL_LIMIT */
  exactGaps?: number;
  /** Further percentiles of the latency metrics (--metric-percentiles), in their Stats' `percentiles`. */
  percentiles?: readonly number[];
}

/** A RunAggregate as toJSON() writes it (worker threads send theirs to the coordinator this way). */
export interface SerializedRunAggregate {
  format: 'chatload.run-aggregate/1';
  options: { slos: Slos | null; warmup_percentages: number[]; exact_records: number | null; exact_gaps: number; percentiles?: number[] };
  records: number;
  warmup: number;
  latency: SerializedHistograms;
  log: SerializedRecordLog | null;
  whole: SerializedSummaryBuilder | null;
  turns: SerializedTurn[] | null;
  conversations: SerializedConversation[];
  peaks: SerializedPeakBins;
  /** The prefix-cache tally; absent in aggregates written before it (issue #13). */
  prefix_cache?: SerializedPrefixCacheTally;
  /** Send times of the non-warmup records (base64 float64), kept when a warmup percentage above 0 needs them. */
  send_times: string | null;
  /** Tool-call and sub-agent tallies (absent in aggregates written before issue #14). */
  agentic?: SerializedAgenticTally;
  /** Per-replica sums and each session's replica (absent before issue #31, and when no record named a replica). */
  replicas?: SerializedReplicaTally;
}

/** Gives every record of an aggregate again, in the order they were added (a file's order), to `visit`. */
export type RecordReplay = (visit: (record: RequestRecord) => void) => Promise<unknown>;

/**
 * The run-level options a RunAggregate takes from a run's summary plan (--goodput parsed, --warmup-percentages), or
 * from a results.json config (--goodput as given, e.g. `["ttft:500"]`).
 */
export function runAggregateOptions(options: { goodput?: Slos | readonly string[]; warmupPercentages?: readonly number[]; metricPercentiles?: readonly number[] }): RunAggregateOptions {
  const goodput = options.goodput;
  return {
    slos: Array.isArray(goodput) ? parseSlos(goodput as readonly string[]) : ((goodput as Slos | undefined) ?? {}),
    warmupPercentages: options.warmupPercentages,
    // Only the ones a Stats does not already have: --metric-percentiles 99 (the default) adds nothing.
    percentiles: options.metricPercentiles?.filter((p) => !FIXED_PERCENTILES.includes(p)),
  };
}

/**
 * Everything chatload derives from a run's records, built one record at a time as they are written, in memory bounded
 * by EXACT_ANALYSIS_RECORDS records' figures, histograms and the number of conversations: the summary, the warmup-
 * percentage summaries, the per-turn and per-conversation tables and the latency histograms of results.json.
 * Aggregates merge (worker threads, shards, a merge of runs) and serialize.
 *
 * Up to `exactRecords` records every statistic is exact: a RecordLog keeps each non-warmup record's figures and the
 * tables are computed from it at the end (ITL exact up to `exactGaps` gaps, as ever). Past it, the summary and
 * per-turn Stats come from histograms (summary.approximate_metrics names them), recorded as records come; counts,
 * totals, ratios, goodput and the per-conversation table stay exact.
 *
 * Warmup percentages need the n non-warmup records ordered by send time, known only at the end: the aggregate keeps
 * their send times (8 bytes each) and cuts exactly at the end. From its RecordLog that needs nothing more; past its
 * limits (records or gaps) the cut summaries need the records once more (warmupPercentagesFrom() with a replay).
 */
export class RunAggregate {
  readonly #slos: Slos | undefined;
  readonly #percentages: number[];
  readonly #exactRecords: number;
  readonly #exactGaps: number;
  readonly #extraPercentiles: readonly number[];
  #records = 0;
  #warmup = 0;
  #latency = new LatencyHistograms();
  #conversations = new ConversationTally();
  /** Per-second output tokens and requests in flight, for `vllm bench serve`'s peak keys. */
  #peaks = new PeakBins();
  /** Actual against expected cached tokens, per turn (issue #13). */
  #prefixCache = new PrefixCacheTally();
  /** Tool calls, their time, divergences from the dataset, sub-agent requests (issue #14). */
  #agentic = new AgenticTally();
  /** Which replica served each request, and the loss to routing (issue #31). */
  #replicas = new ReplicaTally();
  /** Exact mode, and while draining into the histograms just after it. */
  #log: RecordLog | null;
  /** Rows of #log already moved into #whole and #turns. */
  #drained = 0;
  /** Histogram mode: the summary (latency Stats from #latency) and the per-turn table. */
  #whole: SummaryBuilder | null = null;
  #turns: TurnTable | null = null;
  #sendTimes: Float64Column | null;
  /** The summary, per-turn table and sorted send times once computed, until the next add() or merge(). */
  #cache: { summary?: Summary; perTurn?: TurnSummary[]; exact?: { builder: SummaryBuilder; table: TurnTable }; sortedSendTimes?: Float64Array } | null = null;

  constructor(options: RunAggregateOptions = {}) {
    this.#slos = hasSlos(options.slos) ? { ...options.slos } : undefined;
    this.#percentages = checkWarmupPercentages(options.warmupPercentages ?? [0]);
    this.#exactRecords = options.exactRecords ?? EXACT_ANALYSIS_RECORDS;
    this.#exactGaps = options.exactGaps ?? EXACT_ITL_LIMIT;
    this.#extraPercentiles = [...(options.percentiles ?? [])];
    this.#log = new RecordLog(this.#exactGaps);
    this.#sendTimes = this.#percentages.some((p) => p > 0) ? new Float64Column() : null;
    if (this.#exactRecords < 0 || Number.isNaN(this.#exactRecords)) throw new RangeError(`exactRecords must be >= 0, got ${this.#exactRecords}`);
  }

  /** An aggregate of these records. */
  static fromRecords(records: Iterable<RequestRecord>, options: RunAggregateOptions = {}): RunAggregate {
    const out = new RunAggregate(options);
    for (const r of records) out.add(r);
    return out;
  }

  /** Records added, warmup included. */
  get records(): number {
    return this.#records;
  }

  /** The limit past which statistics come from histograms (records, warmup included). */
  get exactRecords(): number {
    return this.#exactRecords;
  }

  /** True while every statistic is exact (at most exactRecords records). */
  get exact(): boolean {
    return this.#whole === null;
  }

  /** TTFT, TPOT, ITL and E2EL of completed non-warmup records: results.json's `histograms`. */
  get histograms(): LatencyHistograms {
    return this.#latency;
  }

  /** Adds one record (a warmup one only counts in warmup_excluded). Costs a few µs, never much more (see DRAIN_BUDGET_MS). */
  add(record: RequestRecord): void {
    this.#cache = null;
    if (++this.#records > this.#exactRecords && this.#whole === null) this.#startHistograms();
    if (record.warmup) {
      this.#warmup++;
      return;
    }
    this.#prefixCache.add(record);
    this.#latency.add(record);
    this.#conversations.add(record);
    this.#peaks.add(record);
    this.#agentic.add(record);
    this.#replicas.add(record);
    this.#sendTimes?.push(record.sent_at_ms);
    if (this.#log === null) {
      this.#whole!.add(record);
      this.#turns!.add(record);
      return;
    }
    // Until the log is drained, records join its end so that the histograms see them in the order they came.
    this.#log.add(record);
    if (this.#whole !== null) this.#drain(DRAIN_MAX_ROWS, DRAIN_BUDGET_MS);
  }

  /** Adds other's records to these (other is unchanged). Throws when other was made with other options. */
  merge(other: RunAggregate): this {
    if (JSON.stringify(this.#optionsJson()) !== JSON.stringify(other.#optionsJson())) {
      throw new Error('RunAggregate.merge(): the aggregates were made with different options');
    }
    this.#cache = null;
    this.#records += other.#records;
    this.#warmup += other.#warmup;
    this.#latency.merge(other.#latency);
    this.#conversations.merge(other.#conversations);
    this.#peaks.merge(other.#peaks);
    this.#prefixCache.merge(other.#prefixCache);
    this.#agentic.merge(other.#agentic);
    this.#replicas.merge(other.#replicas);
    if (other.#sendTimes !== null) this.#sendTimes?.pushAll(other.#sendTimes.toArray());
    // A merge happens at the end (of a worker, of a run): it may move every row into the histograms at once.
    if (this.#whole === null && other.#whole === null) {
      this.#log!.append(other.#log!);
      if (this.#records > this.#exactRecords) this.#startHistograms();
      this.#drain(Number.POSITIVE_INFINITY);
      return this;
    }
    if (this.#whole === null) this.#startHistograms();
    this.#drain(Number.POSITIVE_INFINITY);
    other.#drain(Number.POSITIVE_INFINITY);
    if (other.#log !== null) {
      // other is exact: its rows go into these histograms (its latency histograms were merged above).
      for (let i = 0; i < other.#log.rows; i++) this.#addToHistograms(other.#log, i);
    } else {
      this.#whole!.merge(other.#whole!);
      this.#turns!.merge(other.#turns!);
    }
    return this;
  }

  /** The run's summary. */
  summary(): Summary {
    this.#cache ??= {};
    if (this.#cache.summary !== undefined) return this.#cache.summary;
    let summary: Summary;
    if (this.#whole === null) {
      summary = this.#exactPass().builder.summary(this.#warmup);
    } else {
      this.#drain(Number.POSITIVE_INFINITY);
      summary = this.#whole.summary(this.#warmup);
    }
    // The prefix-cache tally's efficiency: it alone knows each record's warm-start tokens and the records the model
    // had no figure for (the compact rows behind the summary keep neither).
    summary.cache_efficiency = this.#prefixCache.summary().totals.efficiency;
    return (this.#cache.summary = summary);
  }

  /** Actual against expected cached tokens (both models and the own-history figure), in all and per turn. */
  prefixCache(): PrefixCacheSummary {
    return this.#prefixCache.summary();
  }

  /**
   * One row per replica that served a request, as its response header named it; empty when fewer than two did: one
   * replica (the embedded simulator names its index too) has no router to measure, so results carry no `replicas`.
   */
  replicas(): ReplicaRow[] {
    const rows = this.#replicas.rows();
    return rows.length > 1 ? rows : [];
  }

  /** The one ideal cache against one cache per replica, and the sessions scattered; null when fewer than two replicas served. */
  routing(): RoutingLoss | null {
    const routing = this.#replicas.routing();
    return routing !== null && routing.replicas > 1 ? routing : null;
  }

  /** One row per user turn, ascending. */
  perTurn(): TurnSummary[] {
    this.#cache ??= {};
    if (this.#cache.perTurn !== undefined) return this.#cache.perTurn;
    let table = this.#turns;
    if (table === null) table = this.#exactPass().table;
    else this.#drain(Number.POSITIVE_INFINITY);
    return (this.#cache.perTurn = table.summaries());
  }

  /**
   * Exact mode: the summary's builder and the per-turn table, fed in one pass over the log's rows (a run's end asks
   * for both; reading each row once halves the RecordLog.row() calls, each a 20-field object and two views). Kept
   * until the next add() or merge().
   */
  #exactPass(): { builder: SummaryBuilder; table: TurnTable } {
    this.#cache ??= {};
    if (this.#cache.exact !== undefined) return this.#cache.exact;
    const log = this.#log!;
    // Gaps past the limit were dropped from the log; the ITL Stats then come from the results.json histogram, which
    // holds the same gaps in the same order as the exact path's own overflow histogram would.
    const builder = new SummaryBuilder({ slos: this.#slos, percentiles: this.#extraPercentiles, exact: true, itlLimit: this.#exactGaps, shared: log.gapsKept ? {} : { itl_ms: this.#latency.byMetric.itl_ms } });
    const table = new TurnTable({ slos: this.#slos, exact: true });
    for (let i = 0; i < log.rows; i++) {
      const row = log.row(i);
      builder.add(row);
      table.add(row);
    }
    return (this.#cache.exact = { builder, table });
  }

  /** Most output tokens in one second, and most requests in flight during one second (non-warmup records; exact). */
  peaks(): Peaks {
    return this.#peaks.peaks();
  }

  /** Tool calls (count, time to the first tool_calls delta), divergences from the dataset, sub-agent requests; null when none. */
  agentic(): AgenticSummary | null {
    return this.#agentic.summary();
  }

  /** One row per conversation with a measured request, in first-seen order (exact). */
  perConversation(): ConversationSummary[] {
    return this.#conversations.summaries();
  }

  /** Duration, turns and tokens across conversations (exact). */
  conversationStats(): ConversationStats {
    return conversationStats(this.perConversation());
  }

  /** True when the warmup-percentage summaries need the records again (warmupPercentagesFrom()). */
  get warmupPercentagesNeedRecords(): boolean {
    const exactLog = this.#whole === null && this.#log!.gapsKept;
    const n = this.#records - this.#warmup;
    return !exactLog && this.#percentages.some((p) => droppedBy(p, n) > 0 && droppedBy(p, n) < n);
  }

  /**
   * One summary per warmup percentage, keyed "0%", "50%", ...: each leaves out the first X% of the non-warmup records
   * by send time (warmup-cuts.ts). From the aggregate alone, or from `records` (the same records again, in the same
   * order) when warmupPercentagesNeedRecords; without them then, it throws.
   */
  warmupPercentages(records?: Iterable<RequestRecord>): Record<string, Summary> {
    const summaries = this.#warmupSummaries();
    if (!summaries.needsPass) return summaries.finish();
    if (!this.warmupPercentagesNeedRecords) {
      // One pass over the log's rows, in the order they were added (the cuts count ties in that order).
      const log = this.#log!;
      for (let i = 0; i < log.rows; i++) summaries.add(log.sentAt(i), () => log.row(i));
    } else {
      if (records === undefined) throw new Error('RunAggregate.warmupPercentages(): past its exact limits the cuts need the records again');
      for (const r of records) summaries.visit(r);
    }
    return summaries.finish();
  }

  /** warmupPercentages(), taking the records again from `replay` (e.g. streaming requests.jsonl) when they are needed. */
  async warmupPercentagesFrom(replay: RecordReplay): Promise<Record<string, Summary>> {
    if (!this.warmupPercentagesNeedRecords) return this.warmupPercentages();
    const summaries = this.#warmupSummaries();
    await replay(summaries.visit);
    return summaries.finish();
  }

  /** The aggregate as plain data (fromJSON() restores it); worker threads post it to the coordinator. */
  toJSON(): SerializedRunAggregate {
    this.#drain(Number.POSITIVE_INFINITY);
    return {
      format: 'chatload.run-aggregate/1',
      options: this.#optionsJson(),
      records: this.#records,
      warmup: this.#warmup,
      latency: this.#latency.toJSON(),
      log: this.#log?.toJSON() ?? null,
      whole: this.#whole?.toJSON() ?? null,
      turns: this.#turns?.toJSON() ?? null,
      conversations: this.#conversations.toJSON(),
      peaks: this.#peaks.toJSON(),
      prefix_cache: this.#prefixCache.toJSON(),
      send_times: this.#sendTimes === null ? null : float64ToBase64(this.#sendTimes.toArray()),
      agentic: this.#agentic.toJSON(),
      ...(this.#replicas.known ? { replicas: this.#replicas.toJSON() } : {}),
    };
  }

  /** Restores toJSON()'s output. Throws a TypeError when `value` is not one. */
  static fromJSON(value: unknown): RunAggregate {
    const v = value as SerializedRunAggregate;
    if (typeof value !== 'object' || value === null || v.format !== 'chatload.run-aggregate/1') throw new TypeError('not a serialized RunAggregate');
    const o = v.options;
    const out = new RunAggregate({ slos: o.slos ?? undefined, warmupPercentages: o.warmup_percentages, exactRecords: o.exact_records ?? Number.POSITIVE_INFINITY, exactGaps: o.exact_gaps, percentiles: o.percentiles });
    out.#records = v.records;
    out.#warmup = v.warmup;
    out.#latency = LatencyHistograms.fromJSON(v.latency);
    out.#conversations = ConversationTally.fromJSON(v.conversations);
    out.#peaks = PeakBins.fromJSON(v.peaks);
    if (v.prefix_cache !== undefined) out.#prefixCache = PrefixCacheTally.fromJSON(v.prefix_cache);
    out.#agentic = AgenticTally.fromJSON(v.agentic);
    out.#replicas = ReplicaTally.fromJSON(v.replicas);
    out.#log = v.log === null ? null : RecordLog.fromJSON(v.log, out.#exactGaps);
    if (v.whole !== null) {
      out.#whole = SummaryBuilder.fromJSON(v.whole, { slos: out.#slos, shared: out.#latency.byMetric, percentiles: out.#extraPercentiles });
      out.#turns = TurnTable.fromJSON(v.turns ?? [], { slos: out.#slos });
    }
    if (v.send_times !== null && out.#sendTimes !== null) out.#sendTimes = Float64Column.of(float64FromBase64(v.send_times));
    return out;
  }

  #optionsJson(): SerializedRunAggregate['options'] {
    const exactRecords = Number.isFinite(this.#exactRecords) ? this.#exactRecords : null;
    const extra = this.#extraPercentiles.length > 0 ? { percentiles: [...this.#extraPercentiles] } : {};
    return { slos: this.#slos ?? null, warmup_percentages: this.#percentages, exact_records: exactRecords, exact_gaps: this.#exactGaps, ...extra };
  }

  /** Past the exact limit: histograms from here on, fed the log's rows first (#drain), a few per add(). */
  #startHistograms(): void {
    this.#whole = new SummaryBuilder({ slos: this.#slos, percentiles: this.#extraPercentiles, exact: false, shared: this.#latency.byMetric });
    this.#turns = new TurnTable({ slos: this.#slos, exact: false });
    this.#drained = 0;
    this.#drain(0);
  }

  /**
   * Moves up to `max` more rows of the log into the histograms, in order, stopping early (after DRAIN_MIN_ROWS) once
   * `budgetMs` is spent; drops the log once every row is in.
   */
  #drain(max: number, budgetMs = Number.POSITIVE_INFINITY): void {
    const log = this.#log;
    if (log === null || this.#whole === null) return;
    const end = Math.min(log.rows, this.#drained + max);
    const deadline = budgetMs === Number.POSITIVE_INFINITY ? budgetMs : performance.now() + budgetMs;
    let i = this.#drained;
    while (i < end) {
      this.#addToHistograms(log, i++);
      if (i - this.#drained >= DRAIN_MIN_ROWS && performance.now() > deadline) break;
    }
    this.#drained = i;
    if (i === log.rows) this.#log = null;
  }

  #addToHistograms(log: RecordLog, i: number): void {
    const row = log.row(i);
    this.#whole!.add(row);
    this.#turns!.add(row);
  }

  #cuts(): WarmupCut[] {
    return warmupCuts(this.#percentages, this.#records - this.#warmup, () => {
      this.#cache ??= {};
      return (this.#cache.sortedSendTimes ??= sortAscending(this.#sendTimes?.toArray() ?? new Float64Array(0)));
    });
  }

  /** The warmup-percentage summaries to feed, one builder per cut that drops records (as the run's summary is built). */
  #warmupSummaries(): WarmupSummaries {
    return new WarmupSummaries(this.#cuts(), {
      whole: () => this.summary(),
      builder: () => new SummaryBuilder({ slos: this.#slos, percentiles: this.#extraPercentiles, exact: this.exact, itlLimit: this.#exactGaps }),
      warmup: this.#warmup,
      measured: this.#records - this.#warmup,
    });
  }
}
