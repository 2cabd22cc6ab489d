import { DatasetError, type DatasetLocation } from '../../errors/index.js';

/**
 * `--columns`: which column holds what (docs/DATASETS.md, "Local Hugging Face datasets"). The option table parses the
 * text (options/values/column-map.ts); this is the same shape, declared here so that conversation/ needs no options/.
 */
export interface HfColumns {
  /** A list of `{role, content}` (OpenAI) or `{from, value}` (ShareGPT) objects: the whole conversation. */
  messages?: string;
  id?: string;
  /** The one user turn of a prompt/response pair. */
  prompt?: string;
  /** The recorded answer of a prompt/response pair. */
  response?: string;
  /** A system prompt sent before the conversation. */
  system?: string;
}

/** How a row becomes a conversation: the whole dialog in one column, or a prompt with its recorded answer. */
export type Layout =
  | { kind: 'messages'; messages: string; id?: string; system?: string }
  | { kind: 'pair'; prompt: string; response?: string; input?: string; id?: string; system?: string };

/** Detected pairs (prompt column, answer column), in order of preference. */
const PAIRS: readonly (readonly [string, string])[] = [
  ['prompt', 'response'],
  ['prompt', 'completion'],
  ['instruction', 'output'],
  ['instruction', 'response'],
  ['question', 'answer'],
  ['query', 'response'],
  ['input', 'output'],
];
const PROMPTS = ['prompt', 'instruction', 'question', 'query'];
const ANSWERS = ['response', 'completion', 'output', 'answer'];
const IDS = ['id', 'conversation_id', 'conv_id', 'uuid'];
const DIALOGS = ['messages', 'conversations', 'conversation'];

/** The columns as an error lists them. */
export function listColumns(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.map((n) => JSON.stringify(n)).join(', ');
}

/** The layout of a table with these columns: `--columns` where given (each named column must exist), detected for the rest. */
export function resolveLayout(names: readonly string[], map: HfColumns, at: DatasetLocation): Layout {
  const has = new Set(names);
  for (const [key, column] of Object.entries(map) as [keyof HfColumns, string][]) {
    if (!has.has(column)) throw new DatasetError(at, `--columns ${key}=${column}: no column ${JSON.stringify(column)}; the columns are ${listColumns(names)}`);
  }
  const id = map.id ?? IDS.find((c) => has.has(c));
  const system = map.system ?? (has.has('system') ? 'system' : undefined);
  const dialog = map.messages ?? (map.prompt === undefined ? DIALOGS.find((c) => has.has(c)) : undefined);
  if (dialog !== undefined) return { kind: 'messages', messages: dialog, id, system };
  const pair = map.prompt !== undefined ? [map.prompt, map.response ?? ANSWERS.find((c) => has.has(c))] : PAIRS.find(([p, a]) => has.has(p) && has.has(a)) ?? [PROMPTS.find((c) => has.has(c)), undefined];
  const [prompt, response] = pair;
  if (prompt === undefined) {
    throw new DatasetError(
      at,
      `no chat layout in the columns ${listColumns(names)}: expected "messages", "conversations" (ShareGPT), or a prompt/response, instruction/output or question/answer pair; name the columns with --columns (e.g. prompt=text,response=reply)`,
    );
  }
  // Alpaca's layout: an instruction, its optional input (the text it is about), the output.
  const input = prompt === 'instruction' && map.prompt === undefined && has.has('input') ? 'input' : undefined;
  return { kind: 'pair', prompt, response, input, id, system };
}

/** The layout in words, for the load's one-line note. */
export function describeLayout(layout: Layout): string {
  const extra = [layout.id !== undefined ? `id from "${layout.id}"` : 'ids by row', ...(layout.system !== undefined ? [`system from "${layout.system}"`] : [])].join(', ');
  if (layout.kind === 'messages') return `the "${layout.messages}" column as the dialog (${extra})`;
  const answer = layout.response !== undefined ? ` with the recorded answer in "${layout.response}"` : ' (no recorded answer)';
  return `"${layout.prompt}"${layout.input !== undefined ? ` (and "${layout.input}")` : ''} as a one-turn prompt${answer} (${extra})`;
}
