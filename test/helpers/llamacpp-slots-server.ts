// A loopback test server that reproduces how llama.cpp's llama-server (tools/server, checked against a live build
// b11669 with `-np 4 -c 16384 --jinja --metrics`, Qwen3's vocabulary and chat template) caches prompts, so that tests
// can hold chatload's expected-cache model against it. What it reproduces, and where llama.cpp does it:
//  - Slots: `slots` requests run at once, more are deferred until a slot is released (server-context.cpp,
//    process_single_task: `queue_tasks.defer`; release() -> `pop_deferred_task`). `id_slot` in a body pins the slot.
//  - Slot choice (server-context.cpp, get_available_slot): among idle slots holding tokens, the one whose longest
//    common prefix (LCP) with the prompt is the largest fraction of the prompt, if that fraction is > the threshold
//    (`--slot-prompt-similarity`, default 0.1, common/common.h; ties keep the first slot); else the least recently
//    released one (`t_last_used <= t_last`: among never-used slots the LAST one wins).
//  - Host-memory prompt cache (`--cache-ram`, default 8192 MiB, server-task.cpp `server_prompt_cache`): when a slot is
//    chosen by LRU, or by similarity with f_keep = LCP / slot tokens < 0.5, the slot's tokens are saved (alloc: skipped
//    when an entry already holds them all; entries that are a prefix of them are dropped), then the entry that beats
//    the slot on both f_keep and similarity (f_keep >= 0.25) is moved into the slot (load), then the cache is bounded
//    oldest-first, always keeping one entry (update). With `--cache-idle-slots` (default on, common/common.h) every
//    idle slot is also saved each time a task is launched (process_single_task); without a unified KV cache (an
//    explicit -np) the slot keeps its tokens, with one (`unifiedKv`: --kv-unified, llama-server's default when -np is
//    not given, tools/server/server.cpp) it is cleared after the save ([TAG_IDLE_SLOT_CLEAR]).
//  - Reuse (server-context.cpp, pre_decode in update_slots): cached = LCP(slot tokens, prompt ids), token by token
//    (no blocks); a full-prompt hit re-evaluates the last prompt token (`n_past--`, [TAG_PROMPT_LOGITS]);
//    `cache_prompt: false` reuses nothing. The count is reported as usage.prompt_tokens_details.cached_tokens and
//    timings.cache_n (server-task.cpp); /metrics' prompt_tokens_total counts only the processed rest.
//  - What a slot keeps: the prompt, then every sampled token that was decoded (handle_last_sampled_token). The last
//    sampled token is never decoded: after a `length` stop the slot holds prompt + max_tokens - 1 answer tokens;
//    after an EOS stop (EOS counted in completion_tokens) it holds every answer token. While it generates, /slots
//    shows prompt + n_decoded (the newest token is being decoded).
//  - Tokens: a chat prompt is the Jinja template's rendering tokenized with add_special and parse_special
//    (server-context.cpp, tokenize_input_prompts(..., true, true)); Qwen3 adds no BOS. /tokenize defaults to
//    add_special false, parse_special true; parse_special false still splits user-defined tokens like <think>.
//  - Shapes of /apply-template, /tokenize, /detokenize, /props, /slots, /metrics, /v1/models, /health and of chat
//    completions (streamed: usage in a final `choices: []` chunk with include_usage, else timings in the finish chunk),
//    `Server: llama.cpp` (server-http.cpp), as the live b11669 build answers them.
// Not reproduced: context checkpoints (SWA/recurrent models only), --cache-reuse, speculative decoding, context shift,
// the close after a streamed answer (close-after-stream-server.ts has it), real KV byte sizes (the cache bound here is
// in tokens: `promptCacheTokens`).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer as HfCoreTokenizer } from '@huggingface/tokenizers';
import { loadTokenizerPath } from '../../src/tokenizer/resolve.js';
import type { Tokenizer } from '../../src/tokenizer/types.js';
import { family } from './engine-server-core.js';
import { QWEN3_DIR } from './tokenizers.js';

/** What an `answerTokens` function is told about a request. */
export interface AnswerRequest {
  /** The parsed request body. */
  body: Record<string, unknown>;
  promptIds: readonly number[];
  /** The request's max_tokens (or max_completion_tokens, n_predict); -1 when it has none. */
  maxTokens: number;
}

export interface LlamacppSlotsOptions {
  /** `-np`. @default 4 */
  slots?: number;
  /** Context per slot. @default 4096 */
  nCtx?: number;
  /** The host-memory prompt cache (`--cache-ram`; 0 turns it off). @default true */
  promptCache?: boolean;
  /** Its bound, in tokens (llama.cpp bounds bytes: 8192 MiB, millions of tokens of a small model). @default Infinity */
  promptCacheTokens?: number;
  /** `--cache-idle-slots`: save every idle slot into the prompt cache when a task starts. @default true */
  cacheIdleSlots?: boolean;
  /** A unified KV cache (`--kv-unified`): idle slots saved as a task starts are cleared too. @default false */
  unifiedKv?: boolean;
  /** `--slot-prompt-similarity` (0 turns similarity off: LRU only). @default 0.1 */
  similarity?: number;
  /** @default 'qwen3-tiny' */
  model?: string;
  /**
   * Answer tokens before EOS. The answer stops at max_tokens first (`length`, no EOS); fewer tokens end with EOS
   * (`stop`, EOS counted in completion_tokens). @default the request's max_tokens, else 32
   */
  answerTokens?: number | ((request: AnswerRequest) => number);
  /**
   * True: the answer's ids are exactly what /tokenize gives for its text. False: one word in the middle of each
   * answer (of 2+ tokens) is generated as two sub-word tokens, so the text re-tokenizes differently there. @default true
   */
  roundTrip?: boolean;
  /**
   * Answers that think first, as a reasoning model with no reasoning parser streams them: `<think>` … `</think>`
   * then the answer, all in the content. Qwen3's template drops the thinking from earlier turns when the history comes
   * back: the chat template that drops reasoning from history. @default 0 (no thinking)
   */
  thinkWords?: number;
  /** `--slot-save-path`: slot actions (erase) are served; without it they answer 501, as llama-server. @default false */
  slotSavePath?: boolean;
  /** Delay per generated token, ms. @default 1 */
  delayMs?: number;
  /**
   * Holds the first chat request to reach the server until this many others have ended, then queues its task.
   * llama-server's HTTP threads queue a task once they have read its request, so requests sent together can be queued
   * in another order than sent (seen on a live b11669: the first request a run sent waited for a slot behind later ones
   * and reused the system prompt of requests that ended meanwhile). @default none held
   */
  holdFirst?: number;
  /** Seed of the answers' words. @default 0 */
  seed?: number;
}

/** One chat request as the server handled it. */
export interface LlamacppRequestRecord {
  index: number;
  idTask: number;
  slot: number;
  selectedBy: 'similarity' | 'lru' | 'id_slot';
  /** Queued because every slot was busy (or the pinned one was). */
  deferred: boolean;
  promptIds: number[];
  /** Tokens the slot held when the prompt was matched (after a prompt-cache load). */
  slotTokensBefore: number[];
  /** Length of the prompt-cache entry loaded into the slot for this request; 0 when none. */
  restoredTokens: number;
  /** Prompt tokens reused (timings.cache_n). */
  cached: number;
  generatedIds: number[];
  content: string;
  finishReason: 'stop' | 'length';
  /** Tokens the slot holds after the request (set when it ends). */
  slotTokensAfter?: number[];
  error?: string;
}

export interface LlamacppSlotsServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every chat request, in arrival order. */
  requests: LlamacppRequestRecord[];
  /** Requests and their body bytes by `METHOD /path` (what tokenizing on the server costs it: bench/server-tokenize.ts). */
  traffic: Map<string, { calls: number; bodyBytes: number }>;
  /** Each slot's tokens now. */
  slotTokens(): number[][];
  /** The prompt cache's entries, oldest first. */
  promptCacheEntries(): number[][];
  close(): Promise<void>;
}

const BUILD = 'b11669-Debian';
const EOS_ID = 151645;
const JSON_TYPE = 'application/json; charset=utf-8';

// ---------------------------------------------------------------------------------------------------------------
// Tokenizer, template and answer words (loaded once per process)
// ---------------------------------------------------------------------------------------------------------------

interface Assets {
  tokenizer: Tokenizer;
  /** The same vocabulary without the special (control) tokens: /tokenize with parse_special false. */
  plain: HfCoreTokenizer;
  template: Template;
  templateSource: string;
  /** Token id -> its bytes (special and added tokens: their text). */
  pieces: Uint8Array[];
  /** Whole-word tokens (" word") that tokenize back to themselves. */
  words: { id: number; text: string }[];
  /** Words of `words` that two vocabulary tokens also spell (" wo" + "rd"). */
  splits: { text: string; ids: [number, number] }[];
}

let assetsPromise: Promise<Assets> | undefined;

/** GPT-2's byte-level alphabet, reversed: the character a vocabulary string uses -> the byte it stands for. */
function byteDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = bytes.map((b) => String.fromCodePoint(b));
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(String.fromCodePoint(256 + n++));
    }
  }
  return new Map(chars.map((c, i) => [c, bytes[i]!]));
}

function loadAssets(): Promise<Assets> {
  assetsPromise ??= (async () => {
    const counter = await loadTokenizerPath(QWEN3_DIR, 'qwen3');
    const json = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer.json'), 'utf8')) as {
      model: { vocab: Record<string, number> };
      added_tokens: { id: number; content: string; special: boolean }[];
    };
    const config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
    const plain = new HfCoreTokenizer({ ...json, added_tokens: json.added_tokens.filter((t) => !t.special) }, { ...config, chat_template: undefined });
    const decoder = byteDecoder();
    const pieces: Uint8Array[] = [];
    for (const [text, id] of Object.entries(json.model.vocab)) pieces[id] = Uint8Array.from([...text].map((c) => decoder.get(c) ?? 63));
    for (const t of json.added_tokens) pieces[t.id] = new TextEncoder().encode(t.content);
    const { words, splits } = answerWords(counter.tokenizer, json.model.vocab);
    return { tokenizer: counter.tokenizer, plain, template: new Template(config.chat_template), templateSource: config.chat_template, pieces, words, splits };
  })();
  return assetsPromise;
}

/** Lower-case whole-word tokens that survive a round trip, and those of them that two other tokens also spell. */
function answerWords(tokenizer: Tokenizer, vocab: Record<string, number>): Pick<Assets, 'words' | 'splits'> {
  const words: Assets['words'] = [];
  const splits: Assets['splits'] = [];
  const candidates = Object.entries(vocab)
    .filter(([text, id]) => /^Ġ[a-z]{4,9}$/.test(text) && id < 60_000)
    .sort((a, b) => a[1] - b[1]);
  for (const [text, id] of candidates) {
    if (words.length >= 1500) break;
    const word = ' ' + text.slice(1);
    const ids = tokenizer.encode(word);
    if (ids.length !== 1 || ids[0] !== id) continue;
    words.push({ id, text: word });
    if (splits.length >= 300 || text.length < 7) continue;
    for (let k = 3; k <= text.length - 2; k++) {
      const head = vocab[text.slice(0, k)];
      const tail = vocab[text.slice(k)];
      if (head !== undefined && tail !== undefined) {
        splits.push({ text: word, ids: [head, tail] });
        break;
      }
    }
  }
  return { words, splits };
}

// ---------------------------------------------------------------------------------------------------------------
// Chat template (as /apply-template renders it)
// ---------------------------------------------------------------------------------------------------------------

interface WireMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: { function?: { name?: unknown; arguments?: unknown } }[];
  [key: string]: unknown;
}

/** A message as llama.cpp hands it to the template: text parts joined by "\n", tool-call arguments parsed from JSON. */
function templateMessage(message: WireMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { ...message };
  if (Array.isArray(message.content)) {
    out.content = (message.content as { type?: unknown; text?: unknown }[])
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('\n');
  } else if (message.content === null || message.content === undefined) out.content = '';
  if (Array.isArray(message.tool_calls)) {
    out.tool_calls = message.tool_calls.map((call) => {
      const args = call.function?.arguments;
      let parsed: unknown = args;
      if (typeof args === 'string') {
        try {
          parsed = JSON.parse(args);
        } catch {
          parsed = args;
        }
      }
      return { ...call, function: { ...call.function, arguments: parsed } };
    });
  }
  return out;
}

/**
 * The prompt llama-server renders for a chat body. A last assistant message is continued (prefill_assistant): the
 * template renders it without a generation prompt and its closing `<|im_end|>\n` is cut.
 */
function renderPrompt(assets: Assets, body: Record<string, unknown>): string {
  const messages = (Array.isArray(body.messages) ? (body.messages as WireMessage[]) : []).map(templateMessage);
  const prefill = messages.length > 0 && messages[messages.length - 1]!.role === 'assistant';
  const kwargs = typeof body.chat_template_kwargs === 'object' && body.chat_template_kwargs !== null ? body.chat_template_kwargs : {};
  const tools = Array.isArray(body.tools) && body.tools.length > 0 ? { tools: body.tools } : {};
  const text = assets.template.render({ ...kwargs, messages, ...tools, add_generation_prompt: !prefill, bos_token: '', eos_token: '<|im_end|>' });
  return prefill && text.endsWith('<|im_end|>\n') ? text.slice(0, -'<|im_end|>\n'.length) : text;
}

// ---------------------------------------------------------------------------------------------------------------
// Slots and the prompt cache
// ---------------------------------------------------------------------------------------------------------------

interface TaskInfo {
  id: number;
  maxTokens: number;
  stream: boolean;
  generationPrompt: string;
}

export interface Slot {
  id: number;
  tokens: number[];
  /** Release order; -1 before the first release (llama.cpp: t_last_used = ggml_time_us()). */
  tLastUsed: number;
  busy: boolean;
  task?: TaskInfo;
  processed: number;
  cached: number;
  nGen: number;
  hasNextToken: boolean;
}

/** A task waiting for a slot, with what launching it needs. */
export interface PendingTask {
  promptIds: number[];
  idSlot: number;
  start: (slot: Slot, selectedBy: LlamacppRequestRecord['selectedBy'], restored: number, before: number[], deferred: boolean) => void;
  deferred: boolean;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The slots, the prompt cache and the deferred queue, with llama.cpp's rules (see the header). */
export class SlotScheduler {
  readonly slots: Slot[];
  /** Oldest first. */
  readonly cache: number[][] = [];
  readonly deferred: PendingTask[] = [];
  #clock = 0;

  constructor(
    n: number,
    readonly opts: { similarity: number; promptCache: boolean; cacheTokens: number; cacheIdleSlots: boolean; unifiedKv: boolean },
  ) {
    this.slots = Array.from({ length: n }, (_, id) => ({ id, tokens: [], tLastUsed: -1, busy: false, processed: 0, cached: 0, nGen: 0, hasNextToken: true }));
  }

  /** Launches the task now, or defers it until a release (process_single_task). */
  submit(task: PendingTask): void {
    if (!this.#tryLaunch(task)) {
      task.deferred = true;
      this.deferred.push(task);
    }
  }

  release(slot: Slot): void {
    slot.tLastUsed = ++this.#clock;
    slot.busy = false;
    slot.processed = 0;
    slot.cached = 0;
    slot.nGen = 0;
    // Deferred tasks go back to the queue and choose again, in order, while slots are free.
    while (this.deferred.length > 0 && this.#tryLaunch(this.deferred[0]!)) this.deferred.shift();
  }

  #tryLaunch(task: PendingTask): boolean {
    const chosen = this.#select(task);
    if (chosen === undefined || chosen.slot.busy) return false;
    const { slot, selectedBy, updateCache } = chosen;
    let restored = 0;
    if (updateCache && this.opts.promptCache) {
      this.#save(slot);
      restored = this.#load(slot, task.promptIds);
      this.#bound();
    }
    slot.busy = true;
    const before = slot.tokens.slice();
    if (this.opts.promptCache && this.opts.cacheIdleSlots) {
      for (const idle of this.slots) {
        if (idle.busy) continue;
        if (this.#save(idle)) this.#bound();
        if (this.opts.unifiedKv) idle.tokens = [];
      }
    }
    task.start(slot, selectedBy, restored, before, task.deferred);
    return true;
  }

  /** get_available_slot: pinned slot, else prompt similarity, else least recently used. */
  #select(task: PendingTask): { slot: Slot; selectedBy: LlamacppRequestRecord['selectedBy']; updateCache: boolean } | undefined {
    const { promptIds, idSlot } = task;
    let ret = idSlot !== -1 ? this.slots[idSlot % this.slots.length] : undefined;
    let selectedBy: LlamacppRequestRecord['selectedBy'] = 'id_slot';
    let updateCache = false;
    if (this.opts.similarity !== 0) {
      let best = 0;
      for (const slot of this.slots) {
        // llama.cpp compares the raw id here, while get_slot_by_id above wraps it around.
        if ((idSlot !== -1 && slot.id !== idSlot) || slot.busy || slot.tokens.length === 0) continue;
        // llama.cpp computes the shares in single precision (float): Math.fround, as a share on a boundary tips.
        const sim = Math.fround(commonPrefix(slot.tokens, promptIds) / promptIds.length);
        if (sim > best && sim > Math.fround(this.opts.similarity)) {
          best = sim;
          ret = slot;
          selectedBy = idSlot !== -1 ? 'id_slot' : 'similarity';
        }
      }
      // f_keep: the share of the slot's tokens the prompt keeps; losing over half of them saves them first.
      // (A pinned slot that did not match has best = 0 here, so f_keep = 0, as in llama.cpp.)
      if (ret !== undefined && Math.fround(Math.fround(best * promptIds.length) / ret.tokens.length) < 0.5) updateCache = true;
    }
    if (ret === undefined) {
      let tLast = -1;
      for (const slot of this.slots) {
        if (slot.busy) continue;
        if (ret === undefined || slot.tLastUsed <= tLast) {
          tLast = slot.tLastUsed;
          ret = slot;
        }
      }
      selectedBy = 'lru';
      updateCache = ret !== undefined;
    }
    return ret === undefined ? undefined : { slot: ret, selectedBy, updateCache };
  }

  /** prompt_save + server_prompt_cache::alloc. True when an entry was added. */
  #save(slot: Slot): boolean {
    const tokens = slot.tokens;
    if (tokens.length === 0) return false;
    if (this.cache.some((entry) => commonPrefix(entry, tokens) === tokens.length)) return false;
    for (let i = this.cache.length - 1; i >= 0; i--) {
      if (commonPrefix(this.cache[i]!, tokens) === this.cache[i]!.length) this.cache.splice(i, 1);
    }
    this.cache.push(tokens.slice());
    return true;
  }

  /** server_prompt_cache::load: moves the entry that beats the slot on both f_keep and similarity into it. */
  #load(slot: Slot, promptIds: readonly number[]): number {
    const lcp = commonPrefix(slot.tokens, promptIds);
    let keepBest = slot.tokens.length > 0 ? Math.fround(lcp / slot.tokens.length) : -1; // an empty slot takes any entry
    let simBest = Math.fround(lcp / promptIds.length);
    let best = -1;
    this.cache.forEach((entry, i) => {
      const common = commonPrefix(entry, promptIds);
      const keep = Math.fround(common / entry.length);
      const sim = Math.fround(common / promptIds.length);
      if (keep < 0.25) return; // "don't trash large prompts"
      if (keepBest < keep && simBest < sim) {
        keepBest = keep;
        simBest = sim;
        best = i;
      }
    });
    if (best === -1) return 0;
    slot.tokens = this.cache.splice(best, 1)[0]!;
    return slot.tokens.length;
  }

  /** server_prompt_cache::update: drops the oldest entries over the bound, always keeping one. */
  #bound(): void {
    let total = this.cache.reduce((sum, e) => sum + e.length, 0);
    while (this.cache.length > 1 && total > this.opts.cacheTokens) total -= this.cache.shift()!.length;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------------------------

/** FNV-1a over the seed and the prompt ids, then mulberry32: the same request gets the same answer. */
function answerRng(seed: number, promptIds: readonly number[]): () => number {
  let h = (2166136261 ^ seed) >>> 0;
  for (const id of promptIds) h = Math.imul(h ^ id, 16777619) >>> 0;
  let a = h;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` answer tokens: whole words; with roundTrip false the middle word is two sub-word tokens. */
function answerTokens(assets: Assets, count: number, roundTrip: boolean, rng: () => number): { ids: number[]; pieces: string[] } {
  const ids: number[] = [];
  const pieces: string[] = [];
  const splitAt = !roundTrip && count >= 2 ? Math.floor(count / 2) - 1 : -1;
  while (ids.length < count) {
    if (ids.length === splitAt) {
      const split = assets.splits[Math.floor(rng() * assets.splits.length)]!;
      ids.push(...split.ids);
      pieces.push(...split.ids.map((id) => new TextDecoder().decode(assets.pieces[id])));
      continue;
    }
    const word = assets.words[Math.floor(rng() * assets.words.length)]!;
    ids.push(word.id);
    pieces.push(word.text);
  }
  return { ids, pieces };
}

/** The answer after a `<think>` block of `thinkWords` words, when the server was started with some (see the option). */
function withThinking(ctx: Context, answer: { ids: number[]; pieces: string[] }, promptIds: readonly number[]): { ids: number[]; pieces: string[] } {
  const words = ctx.thinkWords;
  if (words === 0) return answer;
  const tokenizer = ctx.assets.tokenizer;
  const piecesOf = (text: string): { ids: number[]; pieces: string[] } => {
    const ids = tokenizer.encode(text);
    return { ids, pieces: ids.map((id) => tokenizer.decode!([id])) };
  };
  const thought = answerTokens(ctx.assets, words, true, answerRng(ctx.opts.seed + 1, promptIds));
  const open = piecesOf('<think>\n');
  const close = piecesOf('\n</think>\n\n');
  return { ids: [...open.ids, ...thought.ids, ...close.ids, ...answer.ids], pieces: [...open.pieces, ...thought.pieces, ...close.pieces, ...answer.pieces] };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------------------

function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type: string, extra: Record<string, unknown> = {}): void {
  send(res, status, { error: { code: status, message, type, ...extra } }, { Connection: 'close' });
}

/** Sampling parameters as /slots and /props show them (llama-server's defaults; max_tokens and stream per task). */
function params(task: TaskInfo | undefined): Record<string, unknown> {
  return {
    seed: 4294967295, temperature: 0.800000011920929, dynatemp_range: 0.0, dynatemp_exponent: 1.0, top_k: 40, top_p: 0.949999988079071,
    min_p: 0.05000000074505806, top_n_sigma: -1.0, xtc_probability: 0.0, xtc_threshold: 0.10000000149011612, typical_p: 1.0,
    repeat_last_n: 64, repeat_penalty: 1.0, presence_penalty: 0.0, frequency_penalty: 0.0, dry_multiplier: 0.0, dry_base: 1.75,
    dry_allowed_length: 2, dry_penalty_last_n: 64, mirostat: 0, mirostat_tau: 5.0, mirostat_eta: 0.10000000149011612,
    adaptive_target: -1.0, adaptive_decay: 0.8999999761581421, max_tokens: task?.maxTokens ?? -1, n_predict: task?.maxTokens ?? -1,
    n_keep: 0, n_discard: 0, ignore_eos: false, stream: task?.stream ?? false, n_probs: 0, min_keep: 0,
    chat_format: task === undefined ? 'Content-only' : 'peg-native', reasoning_format: task === undefined ? 'none' : 'deepseek',
    reasoning_in_content: false, generation_prompt: task?.generationPrompt ?? '',
    samplers: ['penalties', 'dry', 'top_n_sigma', 'top_k', 'typ_p', 'top_p', 'min_p', 'xtc', 'temperature'],
    'speculative.types': 'none', timings_per_token: false, post_sampling_probs: false, backend_sampling: false, lora: [],
  };
}

/** One slot of GET /slots (server_slot::to_json with only_metrics: a slot that never ran a task has four fields). */
function slotJson(slot: Slot, nCtx: number): Record<string, unknown> {
  const base = { id: slot.id, n_ctx: nCtx, speculative: false, is_processing: slot.busy };
  if (slot.task === undefined) return base;
  const nRemain = slot.busy && slot.task.maxTokens !== -1 ? slot.task.maxTokens - slot.nGen : -1;
  return {
    ...base,
    id_task: slot.task.id,
    n_prompt_tokens: slot.tokens.length,
    n_prompt_tokens_processed: slot.processed,
    n_prompt_tokens_cache: slot.cached,
    params: params(slot.task),
    next_token: [{ has_next_token: slot.hasNextToken, has_new_line: false, n_remain: nRemain, n_decoded: slot.nGen }],
  };
}

interface Counters {
  processed: number;
  cached: number;
  predicted: number;
  decodes: number;
  nTokensMax: number;
}

/** GET /metrics, the families and order of the live server (prompt_tokens_total excludes cached tokens). */
function metricsText(c: Counters, scheduler: SlotScheduler): string {
  const counter = (name: string, help: string, value: number) => family(`llamacpp:${name}`, 'counter', help, [`llamacpp:${name} ${value}`]);
  const gauge = (name: string, help: string, value: number) => family(`llamacpp:${name}`, 'gauge', help, [`llamacpp:${name} ${value}`]);
  const busy = scheduler.slots.filter((s) => s.busy).length;
  return (
    counter('prompt_tokens_total', 'Number of prompt tokens processed, excluding cached tokens', c.processed) +
    counter('prompt_tokens_cached_total', 'Number of prompt tokens reused from the cache', c.cached) +
    counter('prompt_seconds_total', 'Total time spent processing prompts', c.processed / 1e5) +
    counter('tokens_predicted_total', 'Number of generation tokens processed', c.predicted) +
    counter('tokens_predicted_seconds_total', 'Total time spent generating tokens', c.predicted / 500) +
    counter('n_decode_total', 'Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding', c.decodes) +
    counter('n_tokens_max', 'Largest observed sequence length (prompt + generation)', c.nTokensMax) +
    counter('spec_decode_num_draft_tokens_total', 'Speculative: Total draft tokens generated', 0) +
    counter('spec_decode_num_accepted_tokens_total', 'Speculative: Total draft tokens accepted by the target model', 0) +
    counter('spec_decode_num_drafts_total', 'Speculative: Total speculative decoding verification steps', 0) +
    gauge('prompt_tokens_seconds', 'Average prompt throughput in tokens/s', 0) +
    gauge('predicted_tokens_seconds', 'Average generation throughput in tokens/s', 0) +
    gauge('requests_processing', 'Number of requests processing', busy) +
    gauge('requests_deferred', 'Number of requests deferred', scheduler.deferred.length) +
    gauge('n_busy_slots_per_decode', 'Average number of busy slots per llama_decode() call', busy === 0 ? 1 : busy)
  );
}

/** What one running server shares with its handlers. */
interface Context {
  assets: Assets;
  scheduler: SlotScheduler;
  counters: Counters;
  requests: LlamacppRequestRecord[];
  opts: Required<Omit<LlamacppSlotsOptions, 'promptCacheTokens' | 'slotSavePath' | 'thinkWords' | 'holdFirst'>> & Pick<LlamacppSlotsOptions, 'holdFirst'>;
  sleep: (ms: number) => Promise<void>;
  nextTaskId: () => number;
  /** Unix seconds, for /metrics' Process-Start-Time-Unix header. */
  startedAt: number;
  /** Words of thinking before each answer (LlamacppSlotsOptions.thinkWords). */
  thinkWords: number;
  /** Requests answered to the end, and the first request while it is held (LlamacppSlotsOptions.holdFirst). */
  ended: number;
  held: (() => void) | undefined;
}

function completionId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return 'chatcmpl-' + Array.from({ length: 32 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
}

function maxTokensOf(body: Record<string, unknown>): number {
  for (const key of ['max_completion_tokens', 'max_tokens', 'n_predict']) {
    if (typeof body[key] === 'number') return body[key];
  }
  return -1;
}

/** POST /v1/chat/completions: tokenizes, queues for a slot, then answers when the scheduler launches it. */
function handleChat(ctx: Context, body: Record<string, unknown>, res: ServerResponse): void {
  const text = renderPrompt(ctx.assets, body);
  const promptIds = ctx.assets.tokenizer.encode(text); // add_special adds nothing for Qwen3 (no BOS)
  const maxTokens = maxTokensOf(body);
  const thinkingOff = (body.chat_template_kwargs as { enable_thinking?: unknown } | undefined)?.enable_thinking === false;
  const task: TaskInfo = { id: ctx.nextTaskId(), maxTokens, stream: body.stream === true, generationPrompt: `<|im_start|>assistant\n${thinkingOff ? '<think>\n\n</think>\n\n' : ''}` };
  const record: LlamacppRequestRecord = {
    index: ctx.requests.length, idTask: task.id, slot: -1, selectedBy: 'lru', deferred: false, promptIds, slotTokensBefore: [],
    restoredTokens: 0, cached: 0, generatedIds: [], content: '', finishReason: 'stop',
  };
  ctx.requests.push(record);
  const idSlot = typeof body.id_slot === 'number' ? body.id_slot : -1;
  const submit = (): void => submitTask(ctx, { body, task, record, res, promptIds, idSlot });
  if (record.index === 0 && (ctx.opts.holdFirst ?? 0) > 0) ctx.held = submit;
  else submit();
}

/** Queues a chat request's task for a slot (process_single_task). */
function submitTask(ctx: Context, q: { body: Record<string, unknown>; task: TaskInfo; record: LlamacppRequestRecord; res: ServerResponse; promptIds: number[]; idSlot: number }): void {
  const { body, task, record, res, promptIds, idSlot } = q;
  ctx.scheduler.submit({
    promptIds,
    idSlot,
    deferred: false,
    start: (slot, selectedBy, restored, before, deferred) => {
      Object.assign(record, { slot: slot.id, selectedBy, restoredTokens: restored, slotTokensBefore: before, deferred });
      slot.task = task;
      void runTask(ctx, { body, slot, task, record, res }).catch((error: unknown) => {
        record.error = (error as Error).message;
        if (slot.busy) ctx.scheduler.release(slot);
        if (!res.headersSent) sendError(res, 500, (error as Error).message, 'server_error');
        else res.end();
      });
    },
  });
}

interface Run {
  body: Record<string, unknown>;
  slot: Slot;
  task: TaskInfo;
  record: LlamacppRequestRecord;
  res: ServerResponse;
}

/** The prompt phase (reuse, context check), then generation, then the slot's release. */
async function runTask(ctx: Context, run: Run): Promise<void> {
  const { body, slot, task, record, res } = run;
  const { promptIds } = record;
  const nCtx = ctx.opts.nCtx;
  if (promptIds.length >= nCtx) {
    record.error = 'exceed_context_size_error';
    ctx.scheduler.release(slot);
    const message = `request (${promptIds.length} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`;
    sendError(res, 400, message, 'exceed_context_size_error', { n_prompt_tokens: promptIds.length, n_ctx: nCtx });
    return;
  }
  let nPast = body.cache_prompt === false ? 0 : commonPrefix(slot.tokens, promptIds);
  if (nPast === promptIds.length && nPast > 0) nPast--; // at least one prompt token is evaluated, for its logits
  record.cached = nPast;
  slot.tokens = promptIds.slice();
  slot.cached = nPast;
  slot.processed = promptIds.length - nPast;
  slot.hasNextToken = true;
  ctx.counters.cached += nPast;
  ctx.counters.processed += promptIds.length - nPast;
  ctx.counters.decodes += 1;
  const wanted = typeof ctx.opts.answerTokens === 'function' ? ctx.opts.answerTokens({ body, promptIds, maxTokens: task.maxTokens }) : ctx.opts.answerTokens;
  const count = task.maxTokens !== -1 ? Math.min(wanted, task.maxTokens) : wanted;
  const answer = withThinking(ctx, answerTokens(ctx.assets, Math.max(0, count), ctx.opts.roundTrip, answerRng(ctx.opts.seed, promptIds)), promptIds);
  const sampled = task.maxTokens !== -1 && count >= task.maxTokens ? answer.ids : [...answer.ids, EOS_ID];
  const out = new AnswerWriter(res, ctx.opts.model, body);
  let finish: 'stop' | 'length' = 'stop';
  let closed = false;
  res.on('close', () => (closed = !res.writableFinished));
  for (let k = 0; k < sampled.length && !closed; k++) {
    await ctx.sleep(ctx.opts.delayMs);
    slot.nGen = k + 1;
    record.generatedIds.push(sampled[k]!);
    if (sampled[k] === EOS_ID) break;
    out.token(answer.pieces[k]!);
    // process_token: the budget, then the context (no context shift). A token that stops the answer is never
    // decoded, so never kept; any other is pushed into the slot as its decode starts (what /slots shows meanwhile).
    if (k + 1 === sampled.length || slot.tokens.length + 1 >= nCtx) {
      finish = 'length';
      break;
    }
    slot.tokens.push(sampled[k]!);
    ctx.counters.decodes += 1;
  }
  record.content = out.content;
  record.finishReason = finish;
  record.slotTokensAfter = slot.tokens.slice();
  ctx.counters.predicted += slot.nGen;
  ctx.counters.nTokensMax = Math.max(ctx.counters.nTokensMax, slot.tokens.length);
  slot.hasNextToken = false;
  const usage = { completion_tokens: slot.nGen, prompt_tokens: promptIds.length, total_tokens: promptIds.length + slot.nGen, prompt_tokens_details: { cached_tokens: nPast } };
  const timings = timingsOf(nPast, promptIds.length - nPast, slot.nGen, ctx.opts.delayMs);
  ctx.scheduler.release(slot);
  if (!closed) out.finish(finish, usage, timings);
  // The held first request is queued once enough others have ended (LlamacppSlotsOptions.holdFirst).
  if (++ctx.ended >= (ctx.opts.holdFirst ?? 0) && ctx.held !== undefined) {
    const submit = ctx.held;
    ctx.held = undefined;
    submit();
  }
}

function timingsOf(cached: number, processed: number, predicted: number, delayMs: number): Record<string, number> {
  const promptMs = 0.5 + processed * 0.01;
  const predictedMs = Math.max(0.001, predicted * delayMs);
  return {
    cache_n: cached, prompt_n: processed, prompt_ms: promptMs, prompt_per_token_ms: promptMs / Math.max(1, processed),
    prompt_per_second: (1000 * processed) / promptMs, predicted_n: predicted, predicted_ms: predictedMs,
    predicted_per_token_ms: predictedMs / Math.max(1, predicted), predicted_per_second: (1000 * predicted) / predictedMs,
  };
}

/** Writes one answer as llama-server does: SSE chunks when streamed, one chat.completion object otherwise. */
class AnswerWriter {
  content = '';
  readonly #base: Record<string, unknown>;
  readonly #stream: boolean;
  readonly #includeUsage: boolean;

  constructor(
    readonly res: ServerResponse,
    model: string,
    body: Record<string, unknown>,
  ) {
    this.#stream = body.stream === true;
    this.#includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    this.#base = { created: Math.floor(Date.now() / 1000), id: completionId(), model, system_fingerprint: BUILD };
    if (this.#stream) {
      res.writeHead(200, { 'X-Accel-Buffering': 'no', 'Content-Type': 'text/event-stream' });
      this.#event({ choices: [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }] });
    }
  }

  #event(fields: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
    const { created, id, model, system_fingerprint } = this.#base;
    this.res.write(`data: ${JSON.stringify({ ...fields, created, id, model, system_fingerprint, object: 'chat.completion.chunk', ...extra })}\n\n`);
  }

  token(piece: string): void {
    this.content += piece;
    if (this.#stream) this.#event({ choices: [{ finish_reason: null, index: 0, delta: { content: piece } }] });
  }

  finish(reason: string, usage: object, timings: object): void {
    if (!this.#stream) {
      const { created, id, model, system_fingerprint } = this.#base;
      const message = { role: 'assistant', content: this.content };
      send(this.res, 200, { choices: [{ finish_reason: reason, index: 0, message }], created, model, system_fingerprint, object: 'chat.completion', usage, id, timings });
      return;
    }
    // With include_usage the usage (and timings) come in a last chunk with no choices; without it, only the
    // timings, in the finish chunk.
    this.#event({ choices: [{ finish_reason: reason, index: 0, delta: {} }] }, this.#includeUsage ? {} : { timings });
    if (this.#includeUsage) this.#event({ choices: [] }, { usage, timings });
    this.res.end('data: [DONE]\n\n');
  }
}

/** POST /tokenize {content, add_special, parse_special, with_pieces} (defaults false, true, false). */
function handleTokenize(ctx: Context, body: Record<string, unknown>, res: ServerResponse): void {
  const content = typeof body.content === 'string' ? body.content : '';
  const ids: number[] = body.parse_special === false ? ctx.assets.plain.encode(content, { add_special_tokens: false }).ids : ctx.assets.tokenizer.encode(content);
  if (body.with_pieces !== true) return send(res, 200, { tokens: ids });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const tokens = ids.map((id) => {
    const bytes = ctx.assets.pieces[id] ?? new Uint8Array();
    try {
      return { id, piece: decoder.decode(bytes) };
    } catch {
      return { id, piece: [...bytes] }; // not valid UTF-8 alone: llama.cpp gives the bytes
    }
  });
  send(res, 200, { tokens });
}

function modelsJson(ctx: Context): unknown {
  const model = ctx.opts.model;
  const details = { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' };
  return {
    models: [{ name: model, model, modified_at: '', size: '', digest: '', type: 'model', description: '', tags: [''], capabilities: ['completion'], parameters: '', details }],
    object: 'list',
    data: [
      {
        id: model, aliases: [model], tags: [], object: 'model', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
        created: Math.floor(Date.now() / 1000), owned_by: 'llamacpp',
        meta: { vocab_type: 2, n_vocab: 151669, n_ctx: ctx.opts.nCtx, n_ctx_train: 32768, n_embd: 64, n_params: 19495872, size: 77983488, ftype: '(guessed) all F32' },
      },
    ],
  };
}

function propsJson(ctx: Context): unknown {
  return {
    default_generation_settings: { params: params(undefined), n_ctx: ctx.opts.nCtx },
    total_slots: ctx.opts.slots, model_alias: ctx.opts.model, model_ftype: '(guessed) all F32', model_path: '/srv/tokenizer-qwen3-vocab.gguf',
    modalities: { vision: false, video: false, audio: false }, media_marker: '<__media_chatload_test__>', endpoint_slots: true,
    endpoint_props: false, endpoint_metrics: true, ui: true, ui_settings: {}, chat_template: ctx.assets.templateSource,
    chat_template_caps: {
      supports_object_arguments: true, supports_parallel_tool_calls: true, supports_preserve_reasoning: false, supports_reasoning_effort: false,
      supports_string_content: true, supports_system_role: true, supports_tool_calls: true, supports_tools: true, supports_typed_content: false,
    },
    bos_token: '<|endoftext|>', eos_token: '<|im_end|>', build_info: BUILD, is_sleeping: false, cors_proxy_enabled: false,
  };
}

/**
 * POST /slots/:id?action=erase (server-context.cpp, handle_slots_action): 501 without --slot-save-path, as every slot
 * action; with it the slot's tokens are dropped. The host-memory prompt cache is NOT emptied (seen on the live
 * b11669 server: after erasing every slot, a run of the same prompts had 1,102 cached tokens from the one before).
 */
function eraseSlot(ctx: Context, id: number, url: string, allowed: boolean, res: ServerResponse): void {
  if (!allowed) return sendError(res, 501, 'This server does not support slots action. Start it with `--slot-save-path`', 'not_supported_error');
  const slot = ctx.scheduler.slots[id];
  if (slot === undefined || !url.includes('action=erase')) return sendError(res, 400, 'Invalid slot action', 'invalid_request_error');
  const erased = slot.tokens.length;
  slot.tokens = [];
  send(res, 200, { id_slot: id, n_erased: erased });
}

/** Every route but chat completions. False: not found. */
function handleRoute(ctx: Context, method: string, path: string, body: Record<string, unknown>, res: ServerResponse): boolean {
  const route = `${method} ${path}`;
  if (route === 'GET /health' || route === 'GET /v1/health') send(res, 200, { status: 'ok' });
  else if (route === 'GET /v1/models' || route === 'GET /models') send(res, 200, modelsJson(ctx));
  else if (route === 'GET /props') send(res, 200, propsJson(ctx));
  else if (route === 'GET /slots') send(res, 200, ctx.scheduler.slots.map((s) => slotJson(s, ctx.opts.nCtx)));
  else if (route === 'GET /metrics') {
    const text = metricsText(ctx.counters, ctx.scheduler);
    const start = { 'Process-Start-Time-Unix': String(ctx.startedAt) };
    res.writeHead(200, { ...start, 'Content-Type': 'text/plain; version=0.0.4', 'Content-Length': Buffer.byteLength(text) }).end(text);
  } else if (route === 'POST /apply-template') send(res, 200, { prompt: renderPrompt(ctx.assets, body) });
  else if (route === 'POST /tokenize') handleTokenize(ctx, body, res);
  else if (route === 'POST /detokenize') {
    const ids = Array.isArray(body.tokens) ? (body.tokens as number[]) : [];
    send(res, 200, { content: ctx.assets.tokenizer.decode?.(ids) ?? '' });
  } else return false;
  return true;
}

/** Starts the server on 127.0.0.1 (an ephemeral port). See the header for what it reproduces. */
export async function startLlamacppSlotsServer(options: LlamacppSlotsOptions = {}): Promise<LlamacppSlotsServer> {
  const assets = await loadAssets();
  const opts: Context['opts'] = {
    slots: options.slots ?? 4, nCtx: options.nCtx ?? 4096, promptCache: options.promptCache ?? true, cacheIdleSlots: options.cacheIdleSlots ?? true,
    unifiedKv: options.unifiedKv ?? false, similarity: options.similarity ?? 0.1, model: options.model ?? 'qwen3-tiny', roundTrip: options.roundTrip ?? true, delayMs: options.delayMs ?? 1,
    seed: options.seed ?? 0, answerTokens: options.answerTokens ?? ((r: AnswerRequest) => (r.maxTokens === -1 ? 32 : r.maxTokens)), holdFirst: options.holdFirst,
  };
  const scheduler = new SlotScheduler(opts.slots, { similarity: opts.similarity, promptCache: opts.promptCache, cacheTokens: options.promptCacheTokens ?? Infinity, cacheIdleSlots: opts.cacheIdleSlots, unifiedKv: opts.unifiedKv });
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(() => (timers.delete(timer), resolve()), ms);
    timers.add(timer);
  });
  let taskId = 0;
  const ctx: Context = { assets, scheduler, counters: { processed: 0, cached: 0, predicted: 0, decodes: 0, nTokensMax: 0 }, requests: [], opts, sleep, nextTaskId: () => taskId++, startedAt: Math.floor(Date.now() / 1000), thinkWords: options.thinkWords ?? 0, ended: 0, held: undefined };
  const traffic = new Map<string, { calls: number; bodyBytes: number }>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.sendDate = false; // llama-server sends no Date header
    res.setHeader('Server', 'llama.cpp');
    res.setHeader('Access-Control-Allow-Origin', '');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const seen = traffic.get(`${req.method} ${path}`) ?? { calls: 0, bodyBytes: 0 };
      traffic.set(`${req.method} ${path}`, { calls: seen.calls + 1, bodyBytes: seen.bodyBytes + chunks.reduce((n, c) => n + c.length, 0) });
      let body: Record<string, unknown> = {};
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        if (text.trim() !== '') body = JSON.parse(text) as Record<string, unknown>;
      } catch (error) {
        return sendError(res, 400, (error as Error).message, 'invalid_request_error');
      }
      const slotAction = /^\/slots\/(\d+)$/.exec(path);
      if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) handleChat(ctx, body, res);
      else if (req.method === 'POST' && slotAction !== null) eraseSlot(ctx, Number(slotAction[1]), req.url ?? '', options.slotSavePath === true, res);
      else if (!handleRoute(ctx, req.method ?? 'GET', path, body, res)) send(res, 404, { error: { message: 'File Not Found', type: 'not_found_error', code: 404 } }, { Connection: 'close' });
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests: ctx.requests,
    traffic,
    slotTokens: () => scheduler.slots.map((s) => s.tokens.slice()),
    promptCacheEntries: () => scheduler.cache.map((e) => e.slice()),
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
