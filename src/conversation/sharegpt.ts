import { Rng } from '../util/rng.js';
import { messageText } from '../tokenizer/content.js';
import type { ChatMessage } from '../tokenizer/types.js';
import { imageDataUrl, itemImages, placeImages } from './sharegpt-images.js';
import type { Conversation } from './types.js';
import { counted } from '../util/plural.js';

/** ShareGPT speaker names and the chat role each maps to. */
const ROLE_OF: Record<string, ChatMessage['role']> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  bing: 'assistant',
  chatgpt: 'assistant',
  bard: 'assistant',
  assistant: 'assistant',
  model: 'assistant',
  system: 'system',
};

/** Filters of a ShareGPT conversion; every field is optional (no filter). */
export interface ShareGptOptions {
  /** Seed for choosing which conversations to keep when there are more than maxItems. @default 0 */
  seed?: number;
  /** Keep at most this many conversations (a seeded random choice, in file order). */
  maxItems?: number;
  /** Drop conversations with fewer messages (user and assistant together, as the reference counts turns). */
  minTurns?: number;
  /** Cut conversations to at most this many messages (rounded down to even, so every kept question has its answer). */
  maxTurns?: number;
  /** Drop conversations with a message shorter than this many characters. */
  minContentLen?: number;
  /** Drop conversations with a message longer than this many characters. */
  maxContentLen?: number;
  /**
   * The folder LLaVA-style items' `image` files are read from (each becomes a data URL image part). @default the
   * current folder (the loaders pass the dataset file's folder)
   */
  imageDir?: string;
  /** The dataset file, for error messages. */
  source?: string;
}

/** Why conversations were dropped, with counts, and what else the conversion did. */
export interface ShareGptReport {
  /** Items read from the file. */
  items: number;
  /** Split conversations (`id_0`, `id_1`, ...) merged into one. */
  mergedParts: number;
  /** Conversations cut to maxTurns. */
  truncated: number;
  /** Dropped conversations by reason. */
  dropped: Record<string, number>;
  /** Conversations kept. */
  kept: number;
}

/** True when `value` looks like a ShareGPT item: `{ "conversations": [{ "from", "value" }, ...] }`. */
export function isShareGptItem(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const c = (value as Record<string, unknown>).conversations;
  return Array.isArray(c) && (c.length === 0 || (typeof c[0] === 'object' && c[0] !== null && 'from' in c[0]));
}

const PART = /^(.*)_(\d+)$/;

interface Group {
  id: string;
  parts: { part: number; turns: unknown[]; images: string[] }[];
}

/**
 * Converts ShareGPT items to conversations: roles mapped (human/user → user; gpt/bing/chatgpt/bard/assistant →
 * assistant; system), split conversations merged by their `_N` id suffix in part order, consecutive messages of
 * one role joined, leading answers dropped, then the filters. Every message is kept whatever its characters (the
 * reference's converter kept only conversations whose every message held a non-ASCII character; this does not).
 * Feed items in file order with add(), then call finish().
 */
export class ShareGptConverter {
  readonly #options: ShareGptOptions;
  readonly #groups = new Map<string, Group>();
  readonly #report: ShareGptReport = { items: 0, mergedParts: 0, truncated: 0, dropped: {}, kept: 0 };

  constructor(options: ShareGptOptions = {}) {
    this.#options = options;
  }

  #drop(reason: string): void {
    this.#report.dropped[reason] = (this.#report.dropped[reason] ?? 0) + 1;
  }

  /** Takes one item of the file. */
  add(item: unknown, index: number): void {
    this.#report.items += 1;
    if (!isShareGptItem(item)) return this.#drop('not a ShareGPT item');
    const record = item as { id?: unknown; conversations: unknown[]; image?: unknown; images?: unknown };
    const images = itemImages(record);
    if (images === 'bad') return this.#drop('an "image" field that is not a file name or a list of them');
    const rawId = typeof record.id === 'string' || typeof record.id === 'number' ? String(record.id) : `sharegpt-${index}`;
    const match = PART.exec(rawId);
    const base = match ? match[1]! : rawId;
    const part = match ? Number(match[2]) : 0;
    let group = this.#groups.get(base);
    if (group === undefined) {
      group = { id: base, parts: [] };
      this.#groups.set(base, group);
    } else this.#report.mergedParts += 1;
    group.parts.push({ part, turns: record.conversations, images });
  }

  /** The kept conversations and the report. */
  finish(): { conversations: Conversation[]; report: ShareGptReport } {
    const o = this.#options;
    const kept: Conversation[] = [];
    for (const group of this.#groups.values()) {
      const turns = group.parts.sort((a, b) => a.part - b.part).flatMap((p) => p.turns);
      const messages = this.#messages(turns);
      if (typeof messages === 'string') {
        this.#drop(messages);
        continue;
      }
      const images = group.parts.flatMap((p) => p.images);
      if (images.length > 0) {
        const { imageDir = '.', source = 'ShareGPT' } = o;
        placeImages(messages, images.map((name) => imageDataUrl(name, imageDir, group.id, source)));
      }
      const dialog = messages.filter((m) => m.role !== 'system').length;
      if (o.minTurns !== undefined && dialog < o.minTurns) {
        this.#drop('fewer turns than --min-turns');
        continue;
      }
      if (o.minContentLen !== undefined && messages.some((m) => messageText(m.content).length < o.minContentLen!)) {
        this.#drop('a message shorter than --min-content-len');
        continue;
      }
      if (o.maxContentLen !== undefined && messages.some((m) => messageText(m.content).length > o.maxContentLen!)) {
        this.#drop('a message longer than --max-content-len');
        continue;
      }
      let out = messages;
      if (o.maxTurns !== undefined && dialog > o.maxTurns) {
        const keep = Math.max(2, o.maxTurns - (o.maxTurns % 2)) + (messages[0]?.role === 'system' ? 1 : 0);
        out = messages.slice(0, keep);
        this.#report.truncated += 1;
      }
      kept.push({ id: group.id, messages: out });
    }
    let chosen = kept;
    if (o.maxItems !== undefined && kept.length > o.maxItems) {
      // A seeded partial Fisher-Yates picks which to keep; they stay in file order.
      const rng = Rng.derive(o.seed ?? 0, 0x73686172);
      const index = kept.map((_, i) => i);
      for (let i = 0; i < o.maxItems; i++) {
        const j = rng.int(i, index.length - 1);
        [index[i], index[j]] = [index[j]!, index[i]!];
      }
      const pick = new Set(index.slice(0, o.maxItems));
      chosen = kept.filter((_, i) => pick.has(i));
      this.#report.dropped['over --max-items'] = kept.length - chosen.length;
    }
    this.#report.kept = chosen.length;
    return { conversations: chosen, report: this.#report };
  }

  /** The chat messages of one merged conversation, or the reason it cannot be used. */
  #messages(turns: unknown[]): ChatMessage[] | string {
    const out: ChatMessage[] = [];
    for (const turn of turns) {
      if (typeof turn !== 'object' || turn === null) return 'a malformed message';
      const t = turn as { from?: unknown; value?: unknown };
      const role = typeof t.from === 'string' ? ROLE_OF[t.from.toLowerCase()] : undefined;
      if (role === undefined) return 'an unknown speaker';
      if (typeof t.value !== 'string') return 'a message without text';
      if (role === 'system') {
        if (out.length === 0) out.push({ role, content: t.value });
        continue;
      }
      const last = out[out.length - 1];
      if (last === undefined || last.role === 'system') {
        // A conversation (or a split part) that opens with an answer: the answer has no question; skip it.
        if (role === 'assistant') continue;
        out.push({ role, content: t.value });
      } else if (last.role === role) last.content += `\n\n${t.value}`;
      else out.push({ role, content: t.value });
    }
    if (!out.some((m) => m.role === 'user')) return 'no user message';
    return out;
  }
}

/** The report as one line, e.g. `kept 3 of 6 items; merged 1 split part; dropped: 1 no user message, ...`. */
export function describeShareGptReport(report: ShareGptReport): string {
  const dropped = Object.entries(report.dropped)
    .filter(([, n]) => n > 0)
    .map(([why, n]) => `${n} ${why}`);
  const parts = [`kept ${counted(report.kept, 'conversation')} from ${counted(report.items, 'item')}`];
  if (report.mergedParts > 0) parts.push(`merged ${counted(report.mergedParts, 'split part')}`);
  if (report.truncated > 0) parts.push(`cut ${report.truncated} to --max-turns`);
  parts.push(dropped.length === 0 ? 'dropped none' : `dropped ${dropped.join(', ')}`);
  return parts.join('; ');
}
