import { DatasetError, type DatasetLocation } from '../../errors/index.js';
import type { Conversation, TraceTurn } from '../types.js';
import { fieldError, idField, idsField, intField, isRecord, timeField } from './fields.js';
import { DEFAULT_AGENTIC_BLOCK_SIZE } from './formats.js';
import { coveringIds, treeConversations, type AgentNode, type TreeOptions } from './session-tree.js';

/*
 * Weka KV-cache-tester traces of coding agents (Claude Code), as AIPerf (docs/tutorials/weka-trace.md) and
 * inference-perf (inference_perf/datagen/replay/weka_trace_replay_datagen.py, the pydantic models WekaTrace,
 * WekaNormalRequest, WekaSubagentEntry) read them: one JSON object a trace (a JSONL line, or a whole .json file),
 * `{id, models, block_size, tool_tokens, system_tokens, requests}`; a request is `{t, type: "n"|"s", model, in, out,
 * hash_ids, api_time?, think_time?, ttft?, stop?, input_types?}` or a sub-agent `{t, type: "subagent", agent_id,
 * subagent_type, duration_ms?, requests: [...]}`. `t` is seconds. Each trace is a session; each sub-agent forks
 * after the parent's last request before it, and the parent's next request waits for it (AIPerf's SPAWN/SPAWN_JOIN).
 */

/**
 * A trace's hash ids are its own (AIPerf: one hash namespace per trace, `hash_id_scope: "local"`; inference-perf seeds
 * each block with the trace id): each trace's ids map to ids of the file no other trace shares.
 */
class HashScope {
  readonly blockSize: number;
  readonly #map = new Map<number, number>();
  readonly #next: () => number;

  constructor(blockSize: number, next: () => number) {
    this.blockSize = blockSize;
    this.#next = next;
  }

  ids(ids: readonly number[]): number[] {
    return ids.map((id) => {
      let mapped = this.#map.get(id);
      if (mapped === undefined) this.#map.set(id, (mapped = this.#next()));
      return mapped;
    });
  }
}

interface WekaRequest {
  turn: TraceTurn;
  /** Seconds on the trace's clock (absolute: a sub-agent's relative times are moved to the trace's). */
  t: number;
  apiTime: number;
}

/** A normal or streaming request `requests[i]` (`where` names it) as a turn at `t` seconds (absolute). */
function readRequest(raw: unknown, where: string, at: DatasetLocation, scope: HashScope, t: number): WekaRequest {
  if (!isRecord(raw)) throw fieldError(at, where, 'a request object {t, type, in, out, hash_ids}', raw);
  const inputLength = intField(raw.in, `${where}.in`, at, 1);
  const outputLength = Math.max(1, intField(raw.out, `${where}.out`, at));
  const ids = raw.hash_ids === undefined ? [] : idsField(raw.hash_ids, `${where}.hash_ids`, at);
  const turn: TraceTurn = { atMs: t * 1000, inputLength, outputLength, hashIds: coveringIds(scope.ids(ids), inputLength, scope.blockSize) };
  // AIPerf: a turn whose `input_types` holds tool_result answers the previous answer's tool call.
  if (Array.isArray(raw.input_types) && raw.input_types.includes('tool_result')) turn.toolResult = true;
  const apiTime = raw.api_time === undefined || raw.api_time === null ? 0 : timeField(raw.api_time, `${where}.api_time`, at);
  return { turn, t, apiTime };
}

/**
 * A sub-agent's requests in parallel streams (inference-perf's _pack_into_streams): a request that starts before the
 * previous one of a stream has ended (`t + api_time`) opens another stream. Each stream replays as one sub-agent.
 */
function packStreams(requests: WekaRequest[]): WekaRequest[][] {
  const streams: WekaRequest[][] = [];
  const ends: number[] = [];
  for (const r of [...requests].sort((a, b) => a.t - b.t)) {
    const free = ends.findIndex((end) => end <= r.t);
    if (free === -1) {
      streams.push([r]);
      ends.push(r.t + r.apiTime);
    } else {
      streams[free]!.push(r);
      ends[free] = r.t + r.apiTime;
    }
  }
  return streams;
}

/** Reads Weka traces, one a row. Feed it rows in file order, then call finish(). */
export class WekaReader {
  readonly format = 'weka';
  readonly #options: TreeOptions;
  readonly #blockSize: number | undefined;
  readonly #roots: AgentNode[] = [];
  #rows = 0;
  #nextId = 1;

  constructor(options: Omit<TreeOptions, 'format'>, blockSize?: number) {
    this.#options = { ...options, format: 'weka' };
    this.#blockSize = blockSize;
  }

  get rows(): number {
    return this.#rows;
  }

  add(value: unknown, line: number | undefined): void {
    const at: DatasetLocation = { file: this.#options.file, line };
    if (!isRecord(value)) throw new DatasetError(at, `expected a Weka trace (a JSON object {id, block_size, requests}), got ${typeof value}`);
    this.#rows += 1;
    const id = idField(value.id, 'id', at);
    // The trace's own block size is its hash ids' (--trace-block-size only stands in where a trace names none).
    const blockSize = value.block_size === undefined || value.block_size === null ? (this.#blockSize ?? DEFAULT_AGENTIC_BLOCK_SIZE.weka) : intField(value.block_size, 'block_size', at, 1);
    if (!Array.isArray(value.requests)) throw fieldError(at, 'requests', 'a list of requests', value.requests);
    const root: AgentNode = { id, turns: [], children: [], blockSize, line };
    const scope = new HashScope(blockSize, () => this.#nextId++);
    let previousStop: unknown;
    value.requests.forEach((raw: unknown, i) => {
      const where = `requests[${i}]`;
      if (!isRecord(raw)) throw fieldError(at, where, 'a request object', raw);
      const t = timeField(raw.t, `${where}.t`, at);
      if (raw.type === 'n' || raw.type === 's') {
        const { turn } = readRequest(raw, where, at, scope, t);
        // AIPerf's fallback: a `stop` of tool_use is always answered by a tool result.
        if (previousStop === 'tool_use') turn.toolResult = true;
        previousStop = raw.stop;
        root.turns.push(turn);
      } else if (raw.type === 'subagent') {
        this.#addSubagent(raw, where, at, root, t, scope);
      } else throw fieldError(at, `${where}.type`, '"n", "s" or "subagent"', raw.type);
    });
    if (root.turns.length > 0) this.#roots.push(root);
  }

  /** A sub-agent entry: its streams fork after the parent's last request before it (or start sessions of their own). */
  #addSubagent(raw: Record<string, unknown>, where: string, at: DatasetLocation, root: AgentNode, t: number, scope: HashScope): void {
    const agentId = idField(raw.agent_id, `${where}.agent_id`, at);
    if (!Array.isArray(raw.requests)) throw fieldError(at, `${where}.requests`, 'a list of requests', raw.requests);
    const inner = raw.requests.map((r: unknown, k) => {
      const w = `${where}.requests[${k}]`;
      if (!isRecord(r) || (r.type !== 'n' && r.type !== 's')) throw fieldError(at, `${w}.type`, '"n" or "s" (a sub-agent holds requests)', isRecord(r) ? r.type : r);
      const rt = timeField(r.t, `${w}.t`, at);
      // Raw kv-cache-tester traces time a sub-agent's requests from its marker, published ones on the trace's clock.
      return readRequest(r, w, at, scope, rt + 1e-6 < t ? t + rt : rt);
    });
    const streams = packStreams(inner);
    streams.forEach((stream, s) => {
      const node: AgentNode = { id: `${root.id}::sa:${agentId}${streams.length > 1 ? `:s${s}` : ''}`, turns: stream.map((r) => r.turn), children: [], blockSize: scope.blockSize, line: at.line };
      const forkAt = root.turns.length - 1;
      if (forkAt >= 0) root.children.push({ at: forkAt, node });
      else this.#roots.push(node); // no parent request before it: a session of its own, at its own time
    });
  }

  finish(): Conversation[] {
    return treeConversations(this.#roots, this.#options);
  }
}
