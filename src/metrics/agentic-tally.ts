import { LatencyHistogram, type SerializedHistogram } from './histogram.js';
import type { RequestRecord, ToolDivergence } from './record.js';
import type { Stats } from './stats.js';

/** What an agentic run adds to the summary (results.json `agentic`; null when no request called a tool or forked). */
export interface AgenticSummary {
  /** Completed non-warmup requests whose answer called at least one tool. */
  tool_call_requests: number;
  /** Tool calls in those answers. */
  tool_calls: number;
  /** Time to the first tool_calls delta (ms), over tool_call_requests. */
  tool_call_ms: Stats | null;
  /** Answers that diverged from the dataset's recorded step (the recorded turn went into the history), by kind. */
  tool_divergences: Record<ToolDivergence, number>;
  /** Completed non-warmup requests of sub-agents (forked sessions). */
  sub_agent_requests: number;
}

/** An AgenticTally as toJSON() writes it. */
export interface SerializedAgenticTally {
  tool_call_requests: number;
  tool_calls: number;
  tool_call_ms: SerializedHistogram;
  tool_divergences: Record<ToolDivergence, number>;
  sub_agent_requests: number;
}

/** The tool-call and sub-agent tallies of a RunAggregate: add, merge, serialize (histograms past exact values). */
export class AgenticTally {
  #requests = 0;
  #calls = 0;
  #subAgent = 0;
  #divergences: Record<ToolDivergence, number> = { missing: 0, unexpected: 0, count: 0 };
  #toolCallMs = new LatencyHistogram({ growing: true });

  /** Adds one record (warmup and failed records are left out, as from the latency metrics). */
  add(r: RequestRecord): void {
    if (r.warmup || r.status !== 'ok') return;
    if (r.parent_conversation_id != null) this.#subAgent++;
    if (r.tool_divergence != null) this.#divergences[r.tool_divergence]++;
    if (r.tool_call_ms == null) return;
    this.#requests++;
    this.#calls += r.tool_calls ?? 0;
    this.#toolCallMs.record(r.tool_call_ms);
  }

  merge(other: AgenticTally): this {
    this.#requests += other.#requests;
    this.#calls += other.#calls;
    this.#subAgent += other.#subAgent;
    for (const k of Object.keys(this.#divergences) as ToolDivergence[]) this.#divergences[k] += other.#divergences[k];
    this.#toolCallMs.merge(other.#toolCallMs);
    return this;
  }

  /** The summary, or null when no request called a tool, diverged or belonged to a sub-agent. */
  summary(): AgenticSummary | null {
    const divergences = Object.values(this.#divergences).reduce((a, b) => a + b, 0);
    if (this.#requests === 0 && this.#subAgent === 0 && divergences === 0) return null;
    return {
      tool_call_requests: this.#requests,
      tool_calls: this.#calls,
      tool_call_ms: this.#toolCallMs.stats(),
      tool_divergences: { ...this.#divergences },
      sub_agent_requests: this.#subAgent,
    };
  }

  toJSON(): SerializedAgenticTally {
    return { tool_call_requests: this.#requests, tool_calls: this.#calls, tool_call_ms: this.#toolCallMs.toJSON(), tool_divergences: { ...this.#divergences }, sub_agent_requests: this.#subAgent };
  }

  static fromJSON(value: SerializedAgenticTally | undefined): AgenticTally {
    const out = new AgenticTally();
    if (value === undefined) return out;
    out.#requests = value.tool_call_requests;
    out.#calls = value.tool_calls;
    out.#subAgent = value.sub_agent_requests;
    out.#divergences = { ...out.#divergences, ...value.tool_divergences };
    out.#toolCallMs = LatencyHistogram.fromJSON(value.tool_call_ms);
    return out;
  }
}
