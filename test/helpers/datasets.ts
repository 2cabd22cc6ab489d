import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Conversation } from '../../src/conversation/types.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'cloud', 'maple', 'orbit', 'lantern', 'copper', 'meadow'];

/** Deterministic filler text of about `words` words (different for different `salt`). */
export function filler(words: number, salt: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + salt * 13 + ((i * salt) % 5)) % WORDS.length]!);
  return out.join(' ');
}

/**
 * `count` conversations with `userTurns(i)` user turns each; turn 1 starts with a per-conversation prefix of
 * `prefixWords` words; every user message has `userWords` words and every recorded answer `answerWords` words.
 */
export function syntheticConversations(options: {
  count: number;
  userTurns: (index: number) => number;
  prefixWords?: number;
  userWords?: number;
  answerWords?: number;
}): Conversation[] {
  const out: Conversation[] = [];
  for (let c = 0; c < options.count; c++) {
    const messages: Conversation['messages'] = [];
    for (let t = 0; t < options.userTurns(c); t++) {
      const prefix = t === 0 && options.prefixWords ? `${filler(options.prefixWords, c)} ` : '';
      messages.push({ role: 'user', content: `${prefix}conversation ${c} turn ${t}: ${filler(options.userWords ?? 20, c + t)}` });
      messages.push({ role: 'assistant', content: filler(options.answerWords ?? 8, c * 31 + t) });
    }
    out.push({ id: `conv-${c}`, messages });
  }
  return out;
}

/** Writes `conversations` as a reference JSON list into `dir` and returns the file's path. */
export function writeDataset(dir: string, conversations: unknown, name = 'in.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(conversations));
  return path;
}

/** writeDataset of `count` synthetic conversations with `turns` user turns each (see syntheticConversations). */
export function writeSyntheticDataset(dir: string, count: number, turns: number, options: { prefixWords?: number } = {}): string {
  return writeDataset(dir, syntheticConversations({ count, userTurns: () => turns, ...options }));
}

/**
 * `count` conversations of one shape, for the prefix cache's curves (sweep --cache-pressure, --think-time): a unique
 * ~800-token system prompt naming `label`, then four short turns.
 */
export function oneShapeConversations(count: number, label: string): Array<{ id: string; messages: Array<{ role: string; content: string }> }> {
  return Array.from({ length: count }, (_, c) => ({
    id: `c${c}`,
    messages: [
      { role: 'system', content: `conversation ${c} of the ${label}. ${filler(400, c + 1)}` },
      ...Array.from({ length: 4 }, (_, t) => [
        { role: 'user', content: `question ${t} of ${c}: ${filler(12, c * 7 + t)}` },
        { role: 'assistant', content: filler(8, c * 11 + t) },
      ]).flat(),
    ],
  }));
}
