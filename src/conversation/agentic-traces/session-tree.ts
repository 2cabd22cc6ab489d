import { DatasetError } from '../../errors/index.js';
import type { ChatMessage } from '../../tokenizer/types.js';
import { MAX_WAIT_SEC } from '../size-bounds.js';
import type { Conversation, TraceTurn } from '../types.js';
import type { AgenticTraceFormat } from './formats.js';

/*
 * The shape every agentic loader builds: a tree of agents, each a chain of requests (trace turns, each with its time
 * `atMs` on the trace's clock), its sub-agents hanging from the turn after whose answer they start. `treeConversations`
 * turns the roots into Conversations: trace sessions whose turns are self-contained (each prompt is its whole context,
 * made from its hash ids, so equal ids are equal prompt blocks wherever they occur) with `forks` for the sub-agents.
 */

/** One agent: its requests in order and its sub-agents. */
export interface AgentNode {
  /** The conversation id (unique in the file). */
  id: string;
  /** Its requests; every one has `atMs`, trace time in ms (absolute until treeConversations rebases it). */
  turns: TraceTurn[];
  /** Sub-agents, each starting after the answer to `turns[at]`. */
  children: { at: number; node: AgentNode }[];
  /** Tokens per hash block of its turns. */
  blockSize: number;
  /** Where it was read (the line of the first row), for order and errors. */
  line?: number;
}

export interface TreeOptions {
  file: string;
  format: AgenticTraceFormat;
  /** --trace-window: roots starting in [startSec, endSec) of the trace's clock. */
  window?: { startSec: number; endSec?: number };
}

/** Ids added to cover a prompt its hash ids fall short of: far above any trace's own, unique. */
let padId = 2 ** 42;

/**
 * The hash ids of a prompt of `inputLength` tokens: the trace's, and when they cover fewer blocks, fresh unique ones
 * for the rest (as inference-perf synthesises a Weka request's missing tail), so the prompt is exactly its length.
 */
export function coveringIds(ids: readonly number[], inputLength: number, blockSize: number): number[] {
  const blocks = Math.ceil(inputLength / blockSize);
  const out = ids.slice(0, Math.max(blocks, 0));
  while (out.length < blocks) out.push(padId++);
  return out;
}

/** When an agent's first request goes, on the trace's clock (ms). */
function startOf(node: AgentNode): number {
  return node.turns[0]?.atMs ?? 0;
}

/** Fails on an id used twice in the tree below `node` (which counts itself). */
function checkIds(node: AgentNode, seen: Set<string>, file: string): void {
  if (seen.has(node.id)) throw new DatasetError({ file, line: node.line }, `session id ${JSON.stringify(node.id)} repeats (every session and sub-agent needs its own)`);
  seen.add(node.id);
  for (const c of node.children) checkIds(c.node, seen, file);
}

function rebase(node: AgentNode, t0: number, file: string): void {
  for (const turn of node.turns) {
    const at = (turn.atMs ?? 0) - t0;
    if (at > MAX_WAIT_SEC * 1000) {
      throw new DatasetError({ file, line: node.line }, `session ${JSON.stringify(node.id)}: a request ${Math.round(at / 1000)} s into the replay is past the bound of a year; are the times in the unit the format says?`);
    }
    turn.atMs = Math.max(0, at);
  }
  for (const c of node.children) rebase(c.node, t0, file);
}

function toConversation(node: AgentNode, format: AgenticTraceFormat, parentId?: string, at?: number): Conversation {
  // Placeholders: one empty user message a turn, as for every trace session; the text is made at send time.
  const messages: ChatMessage[] = node.turns.map(() => ({ role: 'user', content: '' }));
  const conversation: Conversation = { id: node.id, messages, trace: { format, blockSize: node.blockSize, context: 'self-contained', turns: node.turns } };
  if (parentId !== undefined) conversation.parent = { id: parentId, at: at! };
  const children = node.children.filter((c) => c.node.turns.length > 0).sort((a, b) => a.at - b.at);
  if (children.length > 0) conversation.forks = children.map((c) => toConversation(c.node, format, node.id, c.at));
  return conversation;
}

/**
 * The roots as Conversations in order of their first request, times rebased so the replay starts at the window's
 * start (or the first request). Roots starting outside --trace-window are left out, with their sub-agents.
 */
export function treeConversations(roots: readonly AgentNode[], options: TreeOptions): Conversation[] {
  const { file, window } = options;
  checkIds({ id: '', turns: [], children: roots.map((node) => ({ at: 0, node })), blockSize: 1 }, new Set(), file);
  const startMs = window === undefined ? undefined : window.startSec * 1000;
  const endMs = window?.endSec === undefined ? Infinity : window.endSec * 1000;
  const kept = roots.filter((r) => r.turns.length > 0 && (startMs === undefined || startOf(r) >= startMs) && startOf(r) < endMs);
  if (kept.length === 0) {
    throw new DatasetError({ file }, window === undefined ? 'the trace has no requests' : `no session starts inside --trace-window ${window.startSec}:${window.endSec ?? ''}`);
  }
  kept.sort((a, b) => startOf(a) - startOf(b) || (a.line ?? 0) - (b.line ?? 0));
  const t0 = startMs ?? startOf(kept[0]!);
  for (const r of kept) rebase(r, t0, file);
  return kept.map((r) => toConversation(r, options.format));
}
