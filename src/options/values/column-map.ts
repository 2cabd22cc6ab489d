import * as z from 'zod';

/** The keys of `--columns`: which column of a Hugging Face dataset holds what (docs/DATASETS.md). */
export const COLUMN_KEYS = ['messages', 'id', 'prompt', 'response', 'system'] as const;

/** One key of `--columns`. */
export type ColumnKey = (typeof COLUMN_KEYS)[number];

/** `--columns`: the dataset's column for each key given; the keys not given are detected. */
export type ColumnMap = Partial<Record<ColumnKey, string>>;

const EXPECTED = `expected KEY=COLUMN pairs separated by commas, e.g. messages=conversations,id=conv_id; keys: ${COLUMN_KEYS.join(', ')}`;

/** The problem with one `--columns` text, or undefined when it reads as a ColumnMap. */
function columnsProblem(text: string): string | undefined {
  const seen = new Set<string>();
  for (const pair of text.split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*(\S(?:.*\S)?)\s*$/.exec(pair);
    if (match === null) return `${EXPECTED}; got ${JSON.stringify(pair)}`;
    const key = match[1]!;
    if (!(COLUMN_KEYS as readonly string[]).includes(key)) return `unknown key ${JSON.stringify(key)}; ${EXPECTED}`;
    if (seen.has(key)) return `the key ${JSON.stringify(key)} is given twice`;
    seen.add(key);
  }
  if (seen.has('messages') && (seen.has('prompt') || seen.has('response'))) return 'messages= and prompt=/response= are two layouts; give one';
  if (seen.has('response') && !seen.has('prompt')) return 'response= needs prompt= (the question it answers)';
  return undefined;
}

/** `KEY=COLUMN,...` validated and parsed into a ColumnMap. */
export const columnMapSchema = z
  .string()
  .superRefine((text, ctx) => {
    const problem = columnsProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((text): ColumnMap => {
    const map: ColumnMap = {};
    for (const pair of text.split(',')) {
      const at = pair.indexOf('=');
      map[pair.slice(0, at).trim() as ColumnKey] = pair.slice(at + 1).trim();
    }
    return map;
  });
