import { constants, createReadStream } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { ConfigError, DatasetError } from '../errors/index.js';
import type { Conversation } from './types.js';
import { UniqueIds, validateConversation } from './validate.js';

/** 1-based line and column of a character offset in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * JSON.parse with errors that say where. The fast native parser runs first; only on failure does jsonc-parser
 * (strict mode: no comments, no trailing commas) re-scan the text, because V8's messages on Node 20 often carry
 * no position at all.
 */
export function parseJsonWithLocation(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const errors: ParseError[] = [];
    parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first?.offset ?? text.length;
    const { line, column } = lineAndColumn(text, offset);
    const reason = first ? printParseErrorCode(first.error) : (error as Error).message.split('\n')[0];
    throw new DatasetError({ file, line: line + lineOffset, column }, `invalid JSON: ${describeParseError(reason ?? 'syntax error')}`);
  }
}

/** jsonc-parser's codes (e.g. `PropertyNameExpected`) as words. */
function describeParseError(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** Fails with a one-line DatasetError unless `file` is a readable regular file. */
async function checkReadable(file: string): Promise<void> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new DatasetError({ file }, 'expected a file, got a directory');
    await access(file, constants.R_OK);
  } catch (error) {
    if (error instanceof DatasetError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new DatasetError({ file }, `cannot read the file: ${why}`);
  }
}

async function readTextFile(file: string): Promise<string> {
  await checkReadable(file);
  return readFile(file, 'utf8');
}

function rejectGenerationConfig(value: unknown, file: string): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const filetype = (value as Record<string, unknown>).filetype;
    if (filetype === 'generate_conversations') {
      throw new ConfigError(
        `${file}: generation configs (filetype "generate_conversations") are not supported yet: the datasets issue (#4) adds them`,
      );
    }
    throw new DatasetError({ file }, 'expected a JSON list of conversations [{"id", "messages"}, ...] (or JSONL, one per line)');
  }
}

/** Loads the reference's JSON list of conversations. */
async function loadJsonList(file: string): Promise<Conversation[]> {
  const text = await readTextFile(file);
  if (text.trim() === '') throw new DatasetError({ file }, 'the file is empty; expected a JSON list of conversations');
  const value = parseJsonWithLocation(text, file);
  rejectGenerationConfig(value, file);
  const list = value as unknown[];
  if (list.length === 0) throw new DatasetError({ file }, 'expected at least one conversation, got an empty list');
  const ids = new UniqueIds();
  return list.map((item, conversationIndex) => {
    const at = { file, conversationIndex };
    const conversation = validateConversation(item, at);
    ids.check(conversation, at);
    return conversation;
  });
}

/** Loads JSONL, one conversation per line, streaming so large sets never sit in memory as one string. */
async function loadJsonLines(file: string): Promise<Conversation[]> {
  await checkReadable(file);
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const out: Conversation[] = [];
  const ids = new UniqueIds();
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    const value = parseJsonWithLocation(line, file, lineNumber - 1);
    if (lineNumber === 1) rejectGenerationConfigLine(value, file);
    const at = { file, line: lineNumber, conversationIndex: out.length };
    const conversation = validateConversation(value, at);
    ids.check(conversation, at);
    out.push(conversation);
  }
  if (out.length === 0) throw new DatasetError({ file }, 'the file has no conversations; expected one JSON conversation per line');
  return out;
}

function rejectGenerationConfigLine(value: unknown, file: string): void {
  if (typeof value === 'object' && value !== null && (value as Record<string, unknown>).filetype === 'generate_conversations') {
    rejectGenerationConfig(value, file);
  }
}

/**
 * Loads a conversation dataset: the reference's JSON list, or JSONL (one conversation per line) when the file
 * ends in `.jsonl`/`.ndjson`. Every problem is a one-line DatasetError (exit code 2).
 */
export async function loadConversations(file: string): Promise<Conversation[]> {
  return /\.(jsonl|ndjson)$/i.test(file) ? loadJsonLines(file) : loadJsonList(file);
}
