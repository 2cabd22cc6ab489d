import { DatasetError, type DatasetLocation } from '../../errors/index.js';
import { counted } from '../../util/plural.js';
import type { Conversation, TraceTurn } from '../types.js';
import { idsField, intField, isRecord, timeField } from './fields.js';
import { DEFAULT_AGENTIC_BLOCK_SIZE } from './formats.js';
import { treeConversations, type AgentNode, type TreeOptions } from './session-tree.js';

/*
 * Mooncake's tool-and-agent trace (github.com/kvcache-ai/Mooncake, FAST25-release/traces/toolagent_trace.jsonl; the
 * format in FAST25-release/README.md): one request a line, `{timestamp (ms), input_length, output_length, hash_ids}`
 * at 512 tokens a block, the same fields as Mooncake's other traces. It names no sessions: chatload finds them in the
 * hash ids, as AIPerf's flattened-agent detection does (docs/tutorials/weka-trace.md, "Flattened-Agent Detection"):
 * - a request whose full blocks extend the full blocks of a chain's latest request is that chain's next turn (an
 *   agent's loop: the previous prompt, its answer and a tool result);
 * - else, a request that shares more of an earlier request's blocks than that chain's first prompt (context the
 *   chain built up, not just a system prompt every session has) is a sub-agent forked from that chain after its
 *   latest request holding those blocks;
 * - else it starts a session.
 * Each prompt is its hash ids (self-contained), so the replay shares exactly the blocks the trace shares.
 */

/** A 52-bit key of a chain of block ids (two 32-bit murmur3 rounds): the key of ids[0..i] from that of ids[0..i-1]. */
function nextKey(key: number, id: number): number {
  const hi = Math.floor(key / 2 ** 20);
  const mix = (h: number, v: number): number => {
    h = Math.imul(h ^ v, 0xcc9e2d51);
    h = (h << 15) | (h >>> 17);
    return Math.imul(h, 0x1b873593) >>> 0;
  };
  const a = mix(mix(hi, id >>> 0), Math.floor(id / 2 ** 32));
  const b = mix(mix((key % 2 ** 20) ^ 0x9e3779b9, id >>> 0), a);
  return a * 2 ** 20 + (b & 0xfffff);
}

interface Chain {
  node: AgentNode;
  /** Full blocks of its first request. */
  firstFull: number;
  /** Key of its latest request's full blocks (undefined: none). */
  tailKey: number | undefined;
}

/** Reads Mooncake's tool-and-agent trace into sessions with sub-agents. Rows in file (time) order, then finish(). */
export class MooncakeToolAgentReader {
  readonly format = 'mooncake-toolagent';
  readonly #options: TreeOptions;
  readonly #blockSize: number;
  readonly #roots: AgentNode[] = [];
  /** Chains by the key of their latest request's full blocks. */
  readonly #tails = new Map<number, Chain>();
  /** Every full-block prefix seen: the chain and turn of its latest request. */
  readonly #prefixes = new Map<number, { chain: Chain; turn: number }>();
  #rows = 0;

  constructor(options: Omit<TreeOptions, 'format'>, blockSize?: number) {
    this.#options = { ...options, format: 'mooncake-toolagent' };
    this.#blockSize = blockSize ?? DEFAULT_AGENTIC_BLOCK_SIZE['mooncake-toolagent'];
  }

  get rows(): number {
    return this.#rows;
  }

  add(value: unknown, line: number | undefined): void {
    const at: DatasetLocation = { file: this.#options.file, line };
    if (!isRecord(value)) throw new DatasetError(at, `expected a Mooncake trace row (a JSON object), got ${typeof value}`);
    this.#rows += 1;
    const inputLength = intField(value.input_length, 'input_length', at, 1);
    const turn: TraceTurn = {
      atMs: timeField(value.timestamp, 'timestamp', at),
      inputLength,
      outputLength: Math.max(1, intField(value.output_length, 'output_length', at)),
      hashIds: idsField(value.hash_ids, 'hash_ids', at),
    };
    const blocks = Math.ceil(inputLength / this.#blockSize);
    if (turn.hashIds.length < blocks) {
      throw new DatasetError(at, `hash_ids: expected at least ${counted(blocks, 'id')} for input_length ${inputLength} at ${this.#blockSize} tokens a block, got ${turn.hashIds.length} (is --trace-block-size right?)`);
    }
    const full = Math.floor(inputLength / this.#blockSize);
    const keys: number[] = [];
    for (let i = 0, key = 0x2545f491; i < full; i++) keys.push((key = nextKey(key, turn.hashIds[i]!)));
    const chain = this.#place(turn, keys, line);
    const turnIndex = chain.node.turns.length - 1;
    for (const key of keys) this.#prefixes.set(key, { chain, turn: turnIndex });
    if (chain.tailKey !== undefined && this.#tails.get(chain.tailKey) === chain) this.#tails.delete(chain.tailKey);
    chain.tailKey = keys.length > 0 ? keys[keys.length - 1] : undefined;
    if (chain.tailKey !== undefined) this.#tails.set(chain.tailKey, chain);
  }

  /** The chain the request goes to: one it continues, a sub-agent it starts, or a new session. */
  #place(turn: TraceTurn, keys: readonly number[], line: number | undefined): Chain {
    for (let i = keys.length - 1; i >= 0; i--) {
      const chain = this.#tails.get(keys[i]!);
      if (chain !== undefined) {
        chain.node.turns.push(turn);
        return chain;
      }
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const owner = this.#prefixes.get(keys[i]!);
      if (owner === undefined) continue;
      if (i + 1 <= owner.chain.firstFull) break; // only what every session of that prompt shares
      const parent = owner.chain.node;
      const node: AgentNode = { id: `${parent.id}/${parent.children.length + 1}`, turns: [turn], children: [], blockSize: this.#blockSize, line };
      parent.children.push({ at: owner.turn, node });
      return { node, firstFull: keys.length, tailKey: undefined };
    }
    const node: AgentNode = { id: `session-${line ?? this.#rows}`, turns: [turn], children: [], blockSize: this.#blockSize, line };
    this.#roots.push(node);
    return { node, firstFull: keys.length, tailKey: undefined };
  }

  finish(): Conversation[] {
    return treeConversations(this.#roots, this.#options);
  }
}
