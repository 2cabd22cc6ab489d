import { formatCount, sizeBounds, type SizeBounds } from '../../conversation/size-bounds.js';
import type { Conversation, TurnSettings } from '../../conversation/types.js';
import { ConfigError } from '../../errors/index.js';
import { messageText, type TokenCounter } from '../../tokenizer/index.js';
import { letLoopGo } from '../../util/loop-turns.js';
import type { ChatMessage, ToolCall } from '../../tokenizer/types.js';
import { BUILTIN_CORPUS } from '../corpus.js';
import type { Distribution } from '../distributions.js';
import { Rng } from '../../util/rng.js';
import { decodingTokenizer, realize, TokenStream } from '../token-stream.js';
import type { AgenticConfig } from './config.js';

/** The random stream of the agentic generator, derived from --seed. */
const AGENTIC_STREAM = 0x6167656e;
/** The tool a session calls to fork sub-agents; its results are the sub-agents' reports. */
export const SPAWN_TOOL = 'spawn_subagents';
/** Most tokens one generated message may have. */
const MAX_MESSAGE_TOKENS = 2_000_000;

/** A generated agentic dataset: sessions (sub-agents nested in `forks`) and its token accounting. */
export interface AgenticDataset {
  conversations: Conversation[];
  /** Messages whose text was realized, and the largest |tokens - target| among them (0: every one exact). */
  realizedMessages: number;
  maxDrift: number;
  /** Sub-agents generated, and requests (assistant messages) in all. */
  subAgents: number;
  steps: number;
  /** The largest context a session reaches, in tokens of its messages' text (system prompt and tools included). */
  maxContextTokens: number;
}

/** Text of exact token counts, cut from the corpus stream at seeded positions. */
class TextMaker {
  readonly #stream: TokenStream;
  readonly #rng: Rng;
  realized = 0;
  maxDrift = 0;

  constructor(stream: TokenStream, rng: Rng) {
    this.#stream = stream;
    this.#rng = rng;
  }

  /**
   * Text of exactly `tokens` tokens (re-encoded), from a random place in the corpus. A slice whose joins re-encode
   * differently whatever its length is left for another place (up to 8), so every message is exact in practice.
   */
  text(tokens: number): string {
    if (tokens <= 0) return '';
    let best: { text: string; drift: number } | undefined;
    for (let attempt = 0; attempt < 8 && best?.drift !== 0; attempt++) {
      const start = this.#rng.int(0, this.#stream.length - 1);
      const out = realize(this.#stream, [{ start, count: tokens }], 0, tokens);
      if (best === undefined || Math.abs(out.drift) < Math.abs(best.drift)) best = out;
    }
    this.realized += 1;
    this.maxDrift = Math.max(this.maxDrift, Math.abs(best!.drift));
    return best!.text;
  }

  count(text: string): number {
    return this.#stream.tokenizer.count(text);
  }
}

/** A sampled size, rounded and checked against the bound of a message. */
function size(d: Distribution, rng: Rng, where: string, file: string, min = 0): number {
  const n = Math.max(min, Math.round(d.sample(rng)));
  if (n > MAX_MESSAGE_TOKENS) throw new ConfigError(`${file}: ${where}: a sample of ${n} tokens from ${d.describe} is over the bound of ${MAX_MESSAGE_TOKENS} tokens per message; give the distribution a "max"`);
  return n;
}

/**
 * The size bounds of a generated dataset (docs/DATASETS.md), kept while the sessions are built (issue #35's fuzz: a
 * config of 4,992 sessions with up to 46 parallel calls a step ran for minutes, bounded by nothing): messages per
 * session and tokens in all, each a one-line ConfigError naming the file before the text past it is made.
 */
class AgenticBounds {
  #tokens = 0;
  constructor(
    readonly bounds: Readonly<SizeBounds>,
    readonly file: string,
  ) {}

  /** `n` tokens more for `where`; returns `n`. */
  tokens(n: number, where: string): number {
    this.#tokens += n;
    if (this.#tokens > this.bounds.totalTokens) {
      throw new ConfigError(`${this.file}: ${where}: the sessions come to more than ${formatCount(this.bounds.totalTokens)} tokens in all (the bound of a generated dataset); lower num_sessions or the sizes`);
    }
    return n;
  }

  /** A session (or sub-agent) of `count` messages so far. */
  messages(count: number, id: string): void {
    if (count > this.bounds.generatedTurns) {
      throw new ConfigError(`${this.file}: session ${id}: more than ${formatCount(this.bounds.generatedTurns)} messages (the bound of a generated conversation); lower user_turns, steps_per_turn or parallel_calls`);
    }
  }
}

/** What one session (or sub-agent) is being built with. */
interface Builder {
  config: AgenticConfig;
  rng: Rng;
  maker: TextMaker;
  tools: string[];
  /** The tool definitions every session and sub-agent sends. */
  definitions: Record<string, unknown>[];
  out: { subAgents: number; steps: number };
  nextCall: () => string;
  bounds: AgenticBounds;
}

/** A message's size in tokens, sampled, and counted in the dataset's bound. */
function tokens(b: Builder, d: Distribution, where: string, min = 0): number {
  return b.bounds.tokens(size(d, b.rng, where, b.config.file, min), where);
}

/** One tool-calling step: the assistant's calls and the tools' results (a fork when it calls SPAWN_TOOL). */
function toolStep(b: Builder, session: Conversation, messages: ChatMessage[], turns: TurnSettings[], allowFork: boolean): void {
  const { config, rng, maker } = b;
  const fork = allowFork && config.subAgents !== undefined && rng.chance(config.subAgents.probability);
  const calls: ToolCall[] = [];
  const n = fork ? size(config.subAgents!.children, rng, 'sub_agents.children', config.file, 1) : size(config.parallelCalls, rng, 'parallel_calls', config.file, 1);
  b.bounds.messages(messages.length + 1 + n, session.id); // the calls and their results, before any is made
  for (let i = 0; i < n; i++) {
    const name = fork ? SPAWN_TOOL : b.tools[rng.int(0, b.tools.length - 1)]!;
    const argTokens = tokens(b, fork ? config.subAgents!.taskTokens : config.toolArgumentTokens, 'tool_argument_tokens', 1);
    calls.push({ id: b.nextCall(), type: 'function', function: { name, arguments: JSON.stringify({ input: maker.text(argTokens) }) } });
  }
  const answerTokens = calls.reduce((sum, c) => sum + maker.count(c.function.name) + maker.count(c.function.arguments), 0);
  const forkAt = messages.length;
  messages.push({ role: 'assistant', content: '', tool_calls: calls });
  turns[turns.length - 1]!.maxTokens = Math.max(1, answerTokens);
  b.out.steps += 1;
  const think = config.thinkTimeSec === undefined ? undefined : Math.max(0, config.thinkTimeSec.sample(rng));
  turns.push(think === undefined ? {} : { thinkTimeSec: Math.round(think * 1000) / 1000 });
  for (const call of calls) {
    if (fork) {
      const child = subAgent(b, session, forkAt, JSON.parse(call.function.arguments).input as string);
      (session.forks ??= []).push(child);
    }
    const outTokens = fork ? tokens(b, config.subAgents!.reportTokens, 'sub_agents.report_tokens') : tokens(b, config.toolOutputTokens, 'tool_output_tokens');
    messages.push({ role: 'tool', content: maker.text(outTokens), tool_call_id: call.id });
  }
  b.bounds.messages(messages.length, session.id);
}

/** A sub-agent forked after message `forkAt` of `parent`: its task as a user message, its own steps, a report. */
function subAgent(b: Builder, parent: Conversation, forkAt: number, task: string): Conversation {
  const { config, rng, maker } = b;
  b.out.subAgents += 1;
  const child: Conversation = { id: `${parent.id}/sub-${b.out.subAgents}`, messages: [], parent: { id: parent.id, at: forkAt } };
  const messages = child.messages;
  const turns: TurnSettings[] = [{}];
  messages.push({ role: 'user', content: `Sub-agent task: ${task}` });
  const steps = size(config.subAgents!.steps, rng, 'sub_agents.steps', config.file);
  for (let s = 0; s < steps; s++) toolStep(b, child, messages, turns, false);
  const final = tokens(b, config.assistantTokens, 'assistant_tokens', 1);
  messages.push({ role: 'assistant', content: maker.text(final) });
  turns[turns.length - 1]!.maxTokens = final;
  b.out.steps += 1;
  child.turns = turns;
  child.tools = b.definitions;
  return child;
}

/** The tool definitions: `num_tools` functions whose descriptions have the sampled token sizes. */
function toolDefinitions(config: AgenticConfig, rng: Rng, maker: TextMaker, bounds: AgenticBounds): Record<string, unknown>[] {
  const tools: Record<string, unknown>[] = [];
  for (let i = 0; i < config.numTools; i++) {
    const tokens = bounds.tokens(size(config.toolDefinitionTokens, rng, 'tool_definition_tokens', config.file), 'tool_definition_tokens');
    tools.push({ type: 'function', function: { name: `tool_${i}`, description: maker.text(tokens), parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } } });
  }
  if (config.subAgents !== undefined) {
    tools.push({ type: 'function', function: { name: SPAWN_TOOL, description: 'Start a sub-agent on a task; returns its report.', parameters: { type: 'object', properties: { input: { type: 'string' } } } } });
  }
  return tools;
}

/**
 * Generates the sessions of an agentic config (docs/DATASETS.md, "Agentic sessions"): per session a system prompt and
 * tool definitions of the sampled sizes, then user turns, each answered by tool-calling steps (parallel calls,
 * heavy-tailed tool outputs) and a text answer; now and then a step forks sub-agents that share the session's prefix.
 * Every text (system prompt, tool descriptions, user messages, tool outputs, answers) is realized to its exact token
 * count under the run's tokenizer. Deterministic for a seed, a config and a tokenizer.
 */
export async function generateAgenticSessions(config: AgenticConfig, options: { counter: TokenCounter; seed?: number; bounds?: Partial<SizeBounds> }): Promise<AgenticDataset> {
  const bounds = new AgenticBounds(sizeBounds(options.bounds), config.file);
  if (config.numSessions > bounds.bounds.generatedConversations) {
    throw new ConfigError(`${config.file}: num_sessions: ${formatCount(config.numSessions)} is over the bound of ${formatCount(bounds.bounds.generatedConversations)} sessions`);
  }
  const stream = new TokenStream(decodingTokenizer(options.counter.tokenizer), [BUILTIN_CORPUS]);
  const rng = Rng.derive(options.seed ?? 0, AGENTIC_STREAM);
  const maker = new TextMaker(stream, rng);
  const tools = toolDefinitions(config, rng, maker, bounds);
  const toolTokens = tools.reduce((sum, t) => sum + maker.count(JSON.stringify(t)), 0);
  const names = tools.map((t) => (t.function as { name: string }).name).filter((n) => n !== SPAWN_TOOL);
  const out = { subAgents: 0, steps: 0 };
  let maxContextTokens = 0;
  const conversations: Conversation[] = [];
  for (let s = 0; s < config.numSessions; s++) {
    // A session's text is made in one go: the loop is let go between sessions, so that signals are answered.
    await letLoopGo();
    let calls = 0;
    const session: Conversation = { id: `agent-${s}`, messages: [], tools };
    const b: Builder = { config, rng, maker, tools: names, definitions: tools, out, nextCall: () => `call_${s}_${calls++}`, bounds };
    const messages = session.messages;
    messages.push({ role: 'system', content: maker.text(tokens(b, config.systemPromptTokens, 'system_prompt_tokens', 1)) });
    const turns: TurnSettings[] = [];
    const userTurns = size(config.userTurns, rng, 'user_turns', config.file, 1);
    for (let u = 0; u < userTurns; u++) {
      const think = u > 0 && config.thinkTimeSec !== undefined ? Math.round(Math.max(0, config.thinkTimeSec.sample(rng)) * 1000) / 1000 : undefined;
      turns.push(think === undefined ? {} : { thinkTimeSec: think });
      messages.push({ role: 'user', content: maker.text(tokens(b, config.userTokens, 'user_tokens', 1)) });
      const steps = size(config.stepsPerTurn, rng, 'steps_per_turn', config.file);
      for (let k = 0; k < steps; k++) toolStep(b, session, messages, turns, true);
      const final = tokens(b, config.assistantTokens, 'assistant_tokens', 1);
      messages.push({ role: 'assistant', content: maker.text(final) });
      turns[turns.length - 1]!.maxTokens = final;
      out.steps += 1;
      bounds.messages(messages.length, session.id);
    }
    session.turns = turns;
    conversations.push(session);
    const context = toolTokens + messages.reduce((sum, m) => sum + maker.count(messageText(m.content)) + (m.tool_calls ?? []).reduce((a, c) => a + maker.count(c.function.arguments), 0), 0);
    maxContextTokens = Math.max(maxContextTokens, context);
  }
  return { conversations, realizedMessages: maker.realized, maxDrift: maker.maxDrift, subAgents: out.subAgents, steps: out.steps, maxContextTokens };
}
