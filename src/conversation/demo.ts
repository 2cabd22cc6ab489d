import { Rng } from '../util/rng.js';
import type { Conversation } from './types.js';

/*
 * The built-in demo dataset that `chatload run` uses when no -i is given (together with the embedded simulator).
 * It is a realistic multi-turn shape at a small size: a system prompt shared by every conversation (so the
 * prefix cache has something to share across conversations), 3 to 8 user turns each, user messages of 30 to
 * 160 words and recorded answers of 40 to 160 words (they set each turn's max_tokens). Deterministic for a seed.
 */

const WORDS = (
  'the of and to in is it for on that with as was by at be this from or an are not but had his can one all ' +
  'were we when your there use how said each she which do their time if will way about many then them write ' +
  'would like so these her long make thing see him two has look more day could go come did no most my over ' +
  'know than call first who may down side been now find any new work part take get place made live where ' +
  'after back little only round man year came show every good me give our under name very through just form ' +
  'great think say help low line turn cause much mean before move right boy old too same tell does set three ' +
  'want air well also play small end put home read hand port large spell add even land here must big high such'
).split(' ');

const SYSTEM_PROMPT =
  'You are a helpful assistant for a small engineering team. Answer clearly and completely, keep a friendly ' +
  'tone, explain your reasoning step by step when the question is technical, prefer short paragraphs, and ' +
  'say so when you are not sure. When asked to rewrite text, keep its meaning, fix its grammar, and add ' +
  'detail where it helps the reader. Never invent facts about people, places or numbers.';

function sentence(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[rng.int(0, WORDS.length - 1)]!);
  const text = out.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraph(rng: Rng, words: number): string {
  const parts: string[] = [];
  let left = words;
  while (left > 0) {
    const n = Math.min(left, rng.int(8, 18));
    parts.push(sentence(rng, n));
    left -= n;
  }
  return parts.join(' ');
}

/** Options of the demo dataset. */
export interface DemoDatasetOptions {
  conversations?: number;
  seed?: number;
}

/** The built-in demo conversations (see the comment above). */
export function demoConversations(options: DemoDatasetOptions = {}): Conversation[] {
  const count = options.conversations ?? 48;
  const rng = Rng.derive(options.seed ?? 0, 0x64656d6f);
  const out: Conversation[] = [];
  for (let c = 0; c < count; c++) {
    const turns = rng.int(3, 8);
    const messages: Conversation['messages'] = [{ role: 'system', content: SYSTEM_PROMPT }];
    for (let t = 0; t < turns; t++) {
      const ask = t === 0 ? `Conversation ${c}. Please rewrite the following text and add more content: ` : 'Thanks. Now continue with this: ';
      messages.push({ role: 'user', content: ask + paragraph(rng, rng.int(30, 160)) });
      messages.push({ role: 'assistant', content: paragraph(rng, rng.int(40, 160)) });
    }
    out.push({ id: `demo-${String(c).padStart(3, '0')}`, messages });
  }
  return out;
}
