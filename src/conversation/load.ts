import { dirname } from 'node:path';
import { DatasetError, type DatasetLocation } from '../errors/index.js';
import { generateConversations, type GeneratedDataset } from '../synth/generate.js';
import { isGenerationConfig, parseGenerationConfig } from '../synth/generation-config.js';
import { isAgenticConfig, parseAgenticConfig } from '../synth/agentic/config.js';
import { generateAgenticSessions, type AgenticDataset } from '../synth/agentic/generate.js';
import { defaultTokenCounter, messageText, type TokenCounter } from '../tokenizer/index.js';
import { readUtf8File, utf8Lines } from '../util/utf8-text.js';
import { streamJsonList } from './json-stream.js';
import { formatCount, sizeBounds, type SizeBounds } from './size-bounds.js';
import { describeShareGptReport, isShareGptItem, ShareGptConverter, type ShareGptReport } from './sharegpt.js';
import { detectTraceFormat, TraceReader, type TraceFormat, type TraceReadOptions } from './trace.js';
import { agenticTraceReader, detectAgenticTraceFormat, isAgenticTraceFormat, type AgenticTraceFormat, type AgenticTraceReader } from './agentic-traces/index.js';
import type { CsvTraceCounts } from './trace-csv.js';
import { describeCsvCounts } from './trace-csv-reader.js';
import { csvFormatOfReadable, readCsvTrace } from './csv-trace-file.js';
import { checkReadable, firstChar } from './dataset-file.js';
import { MAX_NESTING, nestingPast, parseJsonWithLocation } from './json-location.js';
import type { Conversation, ForkPoint } from './types.js';
import { UniqueIds, validateConversation } from './validate.js';
import { hfSourceKind, isHfChatRow, jsonRow, jsonRowSink, loadHfTables, type HfReadOptions, type HfRowSink, type HfSourceKind } from './hf-datasets/index.js';

/** Files larger than this are streamed element by element instead of read into one string. */
const STREAM_ABOVE_BYTES = 64 * 1024 * 1024;

/** Options of loadConversations / loadDataset. */
export interface LoadOptions {
  /** Seed of a generation config. @default 0 */
  seed?: number;
  /** The tokenizer a generation config counts with. @default the approximate tokenizer (with a warning) */
  counter?: TokenCounter;
  /** Receives one-line warnings (ShareGPT items dropped, approximate generation, invalid UTF-8 allowed). */
  warn?: (message: string) => void;
  /**
   * Read bytes that are not UTF-8 as U+FFFD (one warning per file names the first one's byte offset), in the dataset,
   * a generation config and its `text_files`. Without it such a file is refused: `FILE, byte N: invalid UTF-8 ...`.
   * @default false
   */
  allowInvalidUtf8?: boolean;
  /** Tighter size bounds than SIZE_BOUNDS (docs/DATASETS.md), e.g. for tests. */
  bounds?: Partial<SizeBounds>;
  /** How a production trace is read (--input-format, --trace-block-size, --trace-window). */
  trace?: TraceReadOptions;
  /** Accept only a production trace (Mooncake, Bailian, Azure, BurstGPT): anything else is a DatasetError (`chatload trace stats`). */
  traceOnly?: boolean;
  /** How a Hugging Face dataset (Parquet, Arrow, a folder, a JSONL export) is read: --columns, --split. */
  hf?: HfReadOptions;
}

/** The formats loadDataset recognises. */
export type DatasetFormat = 'json' | 'jsonl' | 'sharegpt' | 'generate' | 'mooncake' | 'bailian' | 'azure' | 'burstgpt' | 'huggingface' | AgenticTraceFormat;

/** A loaded dataset: the conversations and how they were obtained. */
export interface LoadedDataset {
  conversations: Conversation[];
  format: DatasetFormat;
  /** For generation configs: the token accounting and whether the config asks for `print_stats`. */
  generated?: GeneratedDataset;
  printStats?: boolean;
  /** For agentic generation configs: the sessions' accounting. */
  agentic?: AgenticDataset;
  /** For ShareGPT input: what was merged and dropped. */
  sharegpt?: ShareGptReport;
  /** For a CSV trace (Azure, BurstGPT): its rows, and those left out (failed, filtered, outside the window). */
  csvTrace?: CsvTraceCounts;
  /** For a Hugging Face dataset: the layout read (in words), the files and the split. */
  huggingface?: { layout: string; files: string[]; split?: string };
}

/** Validates a stream of parsed items as reference conversations, or converts them when they are ShareGPT; keeps the size bounds. */
class ItemSink {
  readonly #file: string;
  readonly #bounds: Readonly<SizeBounds>;
  readonly #ids = new UniqueIds();
  readonly #out: Conversation[] = [];
  /** Every conversation by id, sub-agents included: a sub-agent names a parent that came before it. */
  readonly #byId = new Map<string, Conversation>();
  #sharegpt: ShareGptConverter | null = null;
  #index = 0;
  #chars = 0;

  constructor(file: string, bounds: Readonly<SizeBounds>) {
    this.#file = file;
    this.#bounds = bounds;
  }

  /** One item parsed from `textChars` characters of the file (0 when the file was read whole: it is small). */
  add(value: unknown, line: number | undefined, textChars = 0): void {
    const index = this.#index++;
    const at = line === undefined ? { file: this.#file, conversationIndex: index } : { file: this.#file, line, conversationIndex: index };
    if (index >= this.#bounds.loadedConversations) {
      throw new DatasetError(at, `more than ${formatCount(this.#bounds.loadedConversations)} conversations (the bound of a loaded dataset)`);
    }
    this.#chars += textChars;
    if (this.#chars > this.#bounds.totalChars) {
      throw new DatasetError(at, `the dataset holds more than ${formatCount(this.#bounds.totalChars)} characters (the bound of a streamed dataset)`);
    }
    if (index === 0 && isShareGptItem(value)) this.#sharegpt = new ShareGptConverter({ imageDir: dirname(this.#file), source: this.#file });
    if (this.#sharegpt !== null) return this.#sharegpt.add(value, index);
    const conversation = validateConversation(value, at);
    this.#ids.check(conversation, at);
    this.#checkMessages(conversation, at);
    this.#byId.set(conversation.id, conversation);
    if (conversation.parent === undefined) this.#out.push(conversation);
    else attachFork(conversation, conversation.parent, this.#byId.get(conversation.parent.id), at);
  }

  get count(): number {
    return this.#index;
  }

  finish(warn: (message: string) => void): LoadedDataset {
    if (this.#sharegpt === null) return { conversations: this.#out, format: 'json' };
    const { conversations, report } = this.#sharegpt.finish();
    if (Object.values(report.dropped).some((n) => n > 0)) warn(`${this.#file}: ShareGPT: ${describeShareGptReport(report)}`);
    if (conversations.length === 0) throw new DatasetError({ file: this.#file }, `no usable ShareGPT conversations: ${describeShareGptReport(report)}`);
    conversations.forEach((c, i) => this.#checkMessages(c, { file: this.#file, conversationIndex: i, conversationId: c.id }));
    return { conversations, format: 'sharegpt', sharegpt: report };
  }

  #checkMessages(conversation: Conversation, at: DatasetLocation): void {
    const max = this.#bounds.messageChars;
    // The text's characters: images have their own bound (imageUrlChars), checked with the part.
    const messageIndex = conversation.messages.findIndex((m) => messageText(m.content).length > max);
    if (messageIndex === -1) return;
    const length = messageText(conversation.messages[messageIndex]!.content).length;
    throw new DatasetError(
      { ...at, conversationId: conversation.id, messageIndex },
      `"content" has ${formatCount(length)} characters, over the bound of ${formatCount(max)} per message`,
    );
  }
}

/**
 * Nests a sub-agent into its parent's `forks`. The parent comes earlier in the file, and `fork_at` names one of its
 * assistant messages: the children start after that answer (docs/DATASETS.md, "Sub-agent forks").
 */
function attachFork(child: Conversation, fork: ForkPoint, parent: Conversation | undefined, at: DatasetLocation): void {
  const where = { ...at, conversationId: child.id };
  if (parent === undefined) throw new DatasetError(where, `"parent" ${JSON.stringify(fork.id)} is not a conversation before this one (a parent comes first)`);
  if (parent.messages[fork.at]?.role !== 'assistant') {
    throw new DatasetError(where, `"fork_at" ${fork.at} is not an assistant message of parent ${JSON.stringify(fork.id)} (its children start after that answer)`);
  }
  (parent.forks ??= []).push(child);
}

/**
 * The first row of a file that must be a trace (`trace stats`, format detected), or one line saying the file is none:
 * a dataset of conversations, pretty-printed JSON or a generation config is no syntax error here but the wrong file.
 */
function firstTraceRow(line: string, file: string): unknown {
  const notATrace = (why: string): DatasetError => new DatasetError({ file }, `not a production trace (${why})`);
  const listed = 'a JSON list, as a dataset of conversations is; a trace is JSONL, one request a line';
  if (line.trim().startsWith('[')) throw notATrace(listed);
  let value: unknown;
  try {
    value = parseJsonWithLocation(line, file);
  } catch (error) {
    // Nested past the bound, it is that bound's error (the place is what helps), as for any JSONL row.
    if (nestingPast(line, MAX_NESTING) !== undefined) throw error;
    throw notATrace('its first line is not one whole JSON object; a trace is JSONL, one request a line');
  }
  if (detectTraceFormat(value) === undefined && detectAgenticTraceFormat(value) === undefined) {
    throw notATrace('its first row has no hash_ids and input_length, nor chat_id and parent_chat_id, and its first line is no Azure or BurstGPT CSV header; name the format with --input-format if it is one');
  }
  return value;
}

async function loadJsonLines(file: string, options: LoadOptions): Promise<LoadedDataset> {
  const bounds = sizeBounds(options.bounds);
  const lines = utf8Lines(file, { ...utf8Options(options), maxLineChars: bounds.itemChars });
  const sink = new ItemSink(file, bounds);
  let trace: TraceReader | AgenticTraceReader | undefined;
  let hf: HfRowSink | undefined;
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    const firstOfTraceOnly = options.traceOnly === true && options.trace?.format === undefined && trace === undefined;
    const value = firstOfTraceOnly ? firstTraceRow(line, file) : parseJsonWithLocation(line, file, lineNumber - 1);
    if (trace !== undefined) {
      trace.add(value, lineNumber);
      continue;
    }
    if (hf !== undefined) {
      hf.add(jsonRow(value, file, lineNumber), { file, line: lineNumber });
      continue;
    }
    if (sink.count === 0) {
      if ((isGenerationConfig(value) || isAgenticConfig(value)) && options.trace?.format === undefined) {
        await lines.return(undefined);
        return loadGenerationConfig(value, file, options);
      }
      const format = (options.trace?.format as TraceFormat | AgenticTraceFormat | undefined) ?? detectTraceFormat(value) ?? detectAgenticTraceFormat(value);
      if (format !== undefined) {
        trace = isAgenticTraceFormat(format) ? agenticTraceReader(format, file, options.trace) : new TraceReader(file, format, options.trace);
        trace.add(value, lineNumber);
        continue;
      }
      // A Hugging Face export's rows (docs/DATASETS.md, "Local Hugging Face datasets"): the same column mapping as Parquet's.
      if (options.hf?.columns !== undefined || isHfChatRow(value)) {
        hf = jsonRowSink(value, file, lineNumber, options.hf?.columns, bounds);
        hf.add(jsonRow(value, file, lineNumber), { file, line: lineNumber });
        continue;
      }
    }
    sink.add(value, lineNumber, line.length);
  }
  if (trace !== undefined) return { conversations: trace.finish(), format: trace.format };
  if (hf !== undefined) return { ...hf.finish(options.warn ?? (() => {}), file), format: 'huggingface' };
  if (sink.count === 0) throw new DatasetError({ file }, 'the file has no conversations; expected one JSON conversation per line');
  const loaded = sink.finish(options.warn ?? (() => {}));
  return loaded.format === 'json' ? { ...loaded, format: 'jsonl' } : loaded;
}

async function loadJsonList(file: string, size: number, options: LoadOptions): Promise<LoadedDataset> {
  if (options.hf?.columns !== undefined) throw new DatasetError({ file }, '--columns maps the rows of JSONL, Parquet or Arrow files and dataset folders; this is a JSON list: write it as JSONL (one row a line)');
  const bounds = sizeBounds(options.bounds);
  const sink = new ItemSink(file, bounds);
  if (size > STREAM_ABOVE_BYTES) {
    for await (const element of streamJsonList(file, { ...utf8Options(options), maxElementChars: bounds.itemChars })) {
      sink.add(parseJsonWithLocation(element.text, file, element.line - 1), element.line, element.text.length);
    }
  } else {
    const value = parseJsonWithLocation(await readUtf8File(file, utf8Options(options)), file);
    if (!Array.isArray(value)) throw new DatasetError({ file }, 'expected a JSON list of conversations [{"id", "messages"}, ...] (or JSONL, one per line)');
    value.forEach((item) => sink.add(item, undefined));
  }
  if (sink.count === 0) throw new DatasetError({ file }, 'expected at least one conversation, got an empty list');
  return sink.finish(options.warn ?? (() => {}));
}

/** The UTF-8 options of a load: invalid bytes refused unless allowed, the warning through `options.warn`. */
function utf8Options(options: LoadOptions): { allowInvalidUtf8: boolean; warn?: (message: string) => void } {
  return { allowInvalidUtf8: options.allowInvalidUtf8 === true, warn: options.warn };
}

async function loadGenerationConfig(value: unknown, file: string, options: LoadOptions): Promise<LoadedDataset> {
  if (isAgenticConfig(value)) {
    const config = parseAgenticConfig(value, file);
    if (options.counter === undefined) options.warn?.(`${file}: generating with the approximate tokenizer; pass --tokenizer for exact token counts`);
    const agentic = await generateAgenticSessions(config, { counter: options.counter ?? defaultTokenCounter, seed: options.seed ?? 0, bounds: options.bounds });
    return { conversations: agentic.conversations, format: 'generate', agentic };
  }
  const config = parseGenerationConfig(value, file, dirname(file), options.bounds);
  if (options.counter === undefined) options.warn?.(`${file}: generating with the approximate tokenizer; pass --tokenizer for exact token counts`);
  const generated = await generateConversations(config, {
    counter: options.counter ?? defaultTokenCounter,
    seed: options.seed ?? 0,
    ...utf8Options(options),
  });
  return { conversations: generated.conversations, format: 'generate', generated, printStats: config.printStats };
}

/**
 * Loads a dataset with its format detected: the reference's JSON list, JSONL (one conversation per line), a
 * ShareGPT file (JSON list or JSONL of `{ "conversations": [{ "from", "value" }] }`), or a `generate_conversations`
 * config (generated in memory with `options.counter` and `options.seed`). JSON lists over 64 MB and every JSONL
 * file are read as streams. Text is UTF-8 (a byte order mark is dropped; invalid bytes are refused unless
 * `options.allowInvalidUtf8`), and sizes are bounded (SIZE_BOUNDS). Every problem is a one-line DatasetError or
 * ConfigError (exit code 2).
 */
export async function loadDataset(file: string, options: LoadOptions = {}): Promise<LoadedDataset> {
  const hfKind = await hfSourceKind(file);
  if (hfKind !== undefined) return loadHfDataset(file, hfKind, options);
  const { size } = await checkReadable(file);
  const csvFormat = await csvFormatOfReadable(file, options);
  if (csvFormat !== undefined) {
    const reader = await readCsvTrace(file, csvFormat, options);
    const conversations = reader.finish();
    const counts = reader.counts;
    if (counts.failedSkipped + counts.filteredOut > 0) options.warn?.(`${file}: ${reader.format} trace: ${describeCsvCounts(counts)}`);
    return { conversations, format: csvFormat, csvTrace: counts };
  }
  const forced = options.trace?.format;
  // An agentic trace may be one JSON document (an OTLP export, a Weka trace file) as well as JSONL.
  if (isAgenticTraceFormat(forced) || (options.traceOnly === true && forced === undefined)) {
    const document = (await firstChar(file)) === '{' ? await wholeAgenticDocument(file, size, forced, options) : undefined;
    if (document !== undefined) return document;
  }
  if (/\.(jsonl|ndjson)$/i.test(file) || forced !== undefined || options.traceOnly === true) return loadJsonLines(file, options);
  const first = await firstChar(file);
  if (first === '') throw new DatasetError({ file }, 'the file is empty; expected a JSON list of conversations');
  if (first === '[') return loadJsonList(file, size, options);
  if (first !== '{') throw new DatasetError({ file, line: 1 }, 'expected a JSON list of conversations, a JSONL file or a generation config');
  if (size <= STREAM_ABOVE_BYTES) {
    // One JSON object (a generation config), or JSONL without the .jsonl extension.
    const text = await readUtf8File(file, utf8Options(options));
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return loadJsonLines(file, options);
    }
    const agentic = detectAgenticTraceFormat(value);
    if (agentic !== undefined) return readAgenticDocument(value, agentic, file, options);
    if (options.trace?.format !== undefined || detectTraceFormat(value) !== undefined) return loadJsonLines(file, options);
    if (isGenerationConfig(value) || isAgenticConfig(value)) return loadGenerationConfig(value, file, options);
    const record = value as Record<string, unknown>;
    if (!text.trim().includes('\n') && (isShareGptItem(value) || 'messages' in record || isHfChatRow(value) || options.hf?.columns !== undefined)) return loadJsonLines(file, options);
    throw new DatasetError({ file }, 'expected a JSON list of conversations [{"id", "messages"}, ...] (or JSONL, one per line)');
  }
  return loadJsonLines(file, options);
}

/** A Parquet or Arrow file or a dataset folder (docs/DATASETS.md, "Local Hugging Face datasets"). */
async function loadHfDataset(path: string, kind: HfSourceKind, options: LoadOptions): Promise<LoadedDataset> {
  if (options.traceOnly === true || options.trace?.format !== undefined) throw new DatasetError({ file: path }, `a Hugging Face dataset (${kind === 'folder' ? 'a folder' : `a ${kind} file`}) is no trace; traces are JSONL`);
  const { conversations, sharegpt, layout, files, split } = await loadHfTables(path, kind, options.hf ?? {}, sizeBounds(options.bounds), options.warn ?? (() => {}));
  return { conversations, format: 'huggingface', sharegpt, huggingface: { layout, files, split } };
}

/** An agentic trace that is one JSON document (read whole: the file is under STREAM_ABOVE_BYTES), as its sessions. */
function readAgenticDocument(value: unknown, format: AgenticTraceFormat, file: string, options: LoadOptions): LoadedDataset {
  const reader = agenticTraceReader(format, file, options.trace);
  reader.add(value, undefined);
  return { conversations: reader.finish(), format };
}

/**
 * The file as one agentic trace document, when it is one: its first line no whole JSON value (so no JSONL), the whole
 * text one JSON object of the forced format (or, for `trace stats`, of a detected agentic format). Read whole up to
 * the bound of one item (itemChars); undefined when it is no such document.
 */
async function wholeAgenticDocument(file: string, size: number, forced: AgenticTraceFormat | undefined, options: LoadOptions): Promise<LoadedDataset | undefined> {
  const bounds = sizeBounds(options.bounds);
  let first: string | undefined;
  for await (const line of utf8Lines(file, { ...utf8Options(options), maxLineChars: bounds.itemChars })) {
    if (line.trim() === '') continue;
    first = line;
    break;
  }
  try {
    JSON.parse(first ?? '');
    return undefined; // a whole JSON value on the first line: JSONL (or a one-line document), read by loadJsonLines
  } catch {
    // a document spread over lines
  }
  if (size > bounds.itemChars) {
    if (forced === undefined) return undefined;
    throw new DatasetError({ file }, `one JSON document of ${formatCount(size)} bytes, over the bound of ${formatCount(bounds.itemChars)} characters a document; write it as JSON lines (one OTLP export request, or one trace, a line)`);
  }
  const value = parseJsonWithLocation(await readUtf8File(file, utf8Options(options)), file);
  const format = forced ?? detectAgenticTraceFormat(value);
  return format === undefined ? undefined : readAgenticDocument(value, format, file, options);
}

/**
 * Loads a dataset's conversations (see loadDataset for the formats). Generation configs are generated in memory
 * with `options.counter` and `options.seed`; ShareGPT files are converted (drops reported through `options.warn`).
 */
export async function loadConversations(file: string, options: LoadOptions = {}): Promise<Conversation[]> {
  return (await loadDataset(file, options)).conversations;
}
