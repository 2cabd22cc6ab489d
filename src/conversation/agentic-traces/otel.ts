import { DatasetError } from '../../errors/index.js';
import type { Conversation, TraceTurn } from '../types.js';
import { intField } from './fields.js';
import { DEFAULT_AGENTIC_BLOCK_SIZE } from './formats.js';
import { spansOf, type Span } from './otel-spans.js';
import { treeConversations, type AgentNode, type TreeOptions } from './session-tree.js';

/*
 * OpenTelemetry GenAI spans (semantic conventions: open-telemetry/semantic-conventions, docs/gen-ai/gen-ai-spans.md
 * and gen-ai-agent-spans.md): one span a model call (`gen_ai.operation.name` chat, text_completion or
 * generate_content; inference-perf's replay also takes a span named `chat ...`), its tokens in
 * `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` (or the older `prompt_tokens` / `completion_tokens`;
 * `gen_ai.request.max_tokens` when no output count is given). The span tree makes the sessions:
 * - an agent is an `invoke_agent` span, or the trace itself for calls under no agent; its calls are the model calls
 *   under it (not under a nearer agent), in start order;
 * - an agent under another agent's span is its sub-agent, forked after the parent's last call that ended before the
 *   sub-agent's first call began; an agent with no calls of its own passes its sub-agents up;
 * - top-level agents are sessions, merged by `gen_ai.conversation.id` when they carry one (a chat over many traces);
 * - an `execute_tool` span between two calls of an agent (or a previous call finishing with tool_calls) makes the
 *   later call a tool-result turn.
 * Spans carry no content hashes: each call's prompt is made of block ids chatload assigns, a call sharing its agent's
 * previous prompt (a sub-agent its parent's prompt at the fork) up to the shorter of the two, in whole blocks; new
 * blocks are new ids. Times are the spans' start times, from the file's first model call (--trace-window counts from it).
 */

const MODEL_CALLS = new Set(['chat', 'text_completion', 'generate_content']);

interface Agent {
  key: string;
  span: Span | undefined;
  calls: Span[];
  tools: Span[];
  /** The agent whose span is nearest above this one's (undefined for a trace root). */
  parentKey: string | undefined;
}

const spanKey = (traceId: string, spanId: string): string => `${traceId}/${spanId}`;
const opOf = (s: Span): unknown => s.attrs.get('gen_ai.operation.name');
const isCall = (s: Span): boolean => MODEL_CALLS.has(opOf(s) as string) || (opOf(s) === undefined && s.name.startsWith('chat '));

/** Reads OTel GenAI spans (OTLP JSON lines or documents, or inference-perf's trace files). Rows then finish(). */
export class OtelReader {
  readonly format = 'otel';
  readonly #options: TreeOptions;
  readonly #blockSize: number;
  readonly #spans = new Map<string, Span>();
  #rows = 0;
  #nextId = 1;

  constructor(options: Omit<TreeOptions, 'format'>, blockSize?: number) {
    this.#options = { ...options, format: 'otel' };
    this.#blockSize = blockSize ?? DEFAULT_AGENTIC_BLOCK_SIZE.otel;
  }

  get rows(): number {
    return this.#rows;
  }

  /** One document (a JSONL line, or the whole file with `line` undefined). A span seen twice is kept once. */
  add(value: unknown, line: number | undefined): void {
    this.#rows += 1;
    for (const s of spansOf(value, this.#options.file, line)) {
      const key = spanKey(s.traceId, s.spanId);
      if (!this.#spans.has(key)) this.#spans.set(key, s);
    }
  }

  /** The agent a span belongs to: its nearest `invoke_agent` ancestor, else its trace. */
  #agentKeyOf(span: Span): string {
    for (let p = span.parentId; p !== undefined; ) {
      const parent = this.#spans.get(spanKey(span.traceId, p));
      if (parent === undefined) break;
      if (opOf(parent) === 'invoke_agent') return spanKey(parent.traceId, parent.spanId);
      p = parent.parentId;
    }
    return `trace:${span.traceId}`;
  }

  #agents(): Map<string, Agent> {
    const agents = new Map<string, Agent>();
    const agent = (key: string): Agent => {
      let a = agents.get(key);
      if (a === undefined) agents.set(key, (a = { key, span: undefined, calls: [], tools: [], parentKey: undefined }));
      return a;
    };
    for (const s of this.#spans.values()) {
      const op = opOf(s);
      if (op === 'invoke_agent') {
        const a = agent(spanKey(s.traceId, s.spanId));
        a.span = s;
        a.parentKey = this.#agentKeyOf(s);
        agent(a.parentKey);
      } else if (isCall(s)) agent(this.#agentKeyOf(s)).calls.push(s);
      else if (op === 'execute_tool') agent(this.#agentKeyOf(s)).tools.push(s);
    }
    for (const a of agents.values()) {
      a.calls.sort((x, y) => x.startMs - y.startMs);
      a.tools.sort((x, y) => x.startMs - y.startMs);
    }
    return agents;
  }

  /** The first model call's start (epoch ms): the trace's clock starts there (for --trace-window). */
  #origin = 0;

  finish(): Conversation[] {
    const agents = this.#agents();
    this.#origin = Infinity;
    for (const a of agents.values()) this.#origin = Math.min(this.#origin, a.calls[0]?.startMs ?? Infinity);
    // The nearest agent above with calls of its own: an agent with none passes its sub-agents up.
    const effectiveParent = (a: Agent): Agent | undefined => {
      for (let k = a.parentKey; k !== undefined; ) {
        const p = agents.get(k)!;
        if (p.calls.length > 0) return p;
        k = p.parentKey;
      }
      return undefined;
    };
    const nodes = new Map<Agent, AgentNode>();
    /** Where an agent's calls start in its node's turns (not 0 when merged into a session by conversation id). */
    const offsets = new Map<Agent, number>();
    const used = new Set<string>();
    const roots: AgentNode[] = [];
    const byConversation = new Map<string, AgentNode>();
    const withCalls = [...agents.values()].filter((a) => a.calls.length > 0).sort((x, y) => x.calls[0]!.startMs - y.calls[0]!.startMs);
    for (const a of withCalls) {
      const parent = effectiveParent(a);
      const node = parent === undefined ? undefined : nodes.get(parent);
      const point = parent === undefined || node === undefined ? -1 : forkPoint(parent, a.calls[0]!.startMs);
      const fork = point < 0 ? -1 : point + (offsets.get(parent!) ?? 0);
      const conv = a.calls[0]!.attrs.get('gen_ai.conversation.id');
      const merged = fork < 0 && typeof conv === 'string' ? byConversation.get(conv) : undefined;
      if (merged !== undefined) {
        nodes.set(a, merged);
        offsets.set(a, merged.turns.length);
        merged.turns.push(...this.#turns(a));
        continue;
      }
      const name = a.span?.attrs.get('gen_ai.agent.name') ?? a.span?.attrs.get('gen_ai.agent.id') ?? a.span?.spanId;
      const base = fork >= 0 ? `${node!.id}/${String(name)}` : typeof conv === 'string' ? conv : a.span === undefined ? a.key.slice('trace:'.length) : `${a.span.traceId}/${String(name)}`;
      let id = base;
      for (let n = 2; used.has(id); n++) id = `${base}#${n}`;
      used.add(id);
      const own: AgentNode = { id, turns: this.#turns(a), children: [], blockSize: this.#blockSize, line: a.calls[0]!.line };
      nodes.set(a, own);
      if (fork >= 0) node!.children.push({ at: fork, node: own });
      else {
        roots.push(own);
        if (typeof conv === 'string') byConversation.set(conv, own);
      }
    }
    for (const r of roots) this.#assignIds(r, [], 0);
    if (roots.length === 0) throw new DatasetError({ file: this.#options.file }, 'no model-call spans (gen_ai.operation.name chat, text_completion or generate_content)');
    return treeConversations(roots, this.#options);
  }

  /** The agent's calls as turns (hash ids assigned later), tool-result turns marked. */
  #turns(a: Agent): TraceTurn[] {
    const file = this.#options.file;
    return a.calls.map((s, k) => {
      const at = { file, line: s.line };
      const input = s.attrs.get('gen_ai.usage.input_tokens') ?? s.attrs.get('gen_ai.usage.prompt_tokens');
      const output = s.attrs.get('gen_ai.usage.output_tokens') ?? s.attrs.get('gen_ai.usage.completion_tokens') ?? s.attrs.get('gen_ai.request.max_tokens');
      const turn: TraceTurn = {
        atMs: s.startMs - this.#origin,
        inputLength: intField(input, `span ${s.spanId}: gen_ai.usage.input_tokens`, at, 1),
        outputLength: Math.max(1, intField(output, `span ${s.spanId}: gen_ai.usage.output_tokens`, at)),
        hashIds: [],
      };
      const previous = a.calls[k - 1];
      if (previous !== undefined) {
        const reasons = previous.attrs.get('gen_ai.response.finish_reasons');
        const called = Array.isArray(reasons) && reasons.some((r) => r === 'tool_calls' || r === 'tool_use');
        if (called || a.tools.some((t) => t.startMs >= previous.startMs && t.startMs < s.startMs)) turn.toolResult = true;
      }
      return turn;
    });
  }

  /** Block ids: each turn shares the previous prompt's whole blocks (the fork turn's, for a sub-agent's first). */
  #assignIds(node: AgentNode, startIds: readonly number[], startLength: number): void {
    const bs = this.#blockSize;
    let prevIds = startIds;
    let prevLength = startLength;
    for (const turn of node.turns) {
      const shared = Math.min(Math.floor(prevLength / bs), Math.floor(turn.inputLength / bs), prevIds.length);
      const ids = prevIds.slice(0, shared);
      while (ids.length < Math.ceil(turn.inputLength / bs)) ids.push(this.#nextId++);
      turn.hashIds = ids;
      prevIds = ids;
      prevLength = turn.inputLength;
    }
    for (const c of node.children) this.#assignIds(c.node, node.turns[c.at]!.hashIds, node.turns[c.at]!.inputLength);
  }
}

/** The parent's call a sub-agent starting at `startMs` forks after: its last call ended by then, else begun by then; -1: none. */
function forkPoint(parent: Agent, startMs: number): number {
  let ended = -1;
  let begun = -1;
  parent.calls.forEach((c, k) => {
    if (c.endMs <= startMs) ended = k;
    if (c.startMs <= startMs) begun = k;
  });
  return ended >= 0 ? ended : begun;
}
