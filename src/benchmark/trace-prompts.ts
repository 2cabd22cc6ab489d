import type { Conversation, TraceSession, TraceTurn, TurnSettings } from '../conversation/types.js';
import { HashBlockText } from '../synth/hash-blocks.js';
import type { ChatMessage, Tokenizer } from '../tokenizer/types.js';

/** Block ids of the answers' stand-in text: far from any trace's own ids, so no answer shares a prompt's blocks. */
const ANSWER_BLOCK_BASE = 2 ** 40;

/**
 * A trace's sessions as the conversations a replay sends (issue #34: `run -i TRACE --generate-only` wrote every user
 * message empty, the prompts being made only at send time): each turn's prompt from its hash ids, with the run's
 * tokenizer and seed (the same text as the replay), then a stand-in answer of output_length tokens that carries the
 * turn's max_tokens. A session sent with its history stays one conversation; self-contained turns (Bailian, a
 * pre-formatted Mooncake prompt) become one conversation each, `SESSION/K`, since a conversation sends its history.
 * Mooncake's `delay` becomes the turn's think_time_sec. The trace's timestamps are not kept: the file replays as
 * conversations, not on the trace's schedule.
 */
export function tracePromptConversations(conversations: readonly Conversation[], tokenizer: Tokenizer, seed: number): Conversation[] {
  const text = new HashBlockText(tokenizer, seed);
  const out: Conversation[] = [];
  const add = (c: Conversation): void => {
    const trace = c.trace;
    if (trace === undefined) {
      out.push(c);
      return;
    }
    const steps = trace.turns.map((turn, k) => stepOf(text, trace, turn, k));
    if (trace.context === 'history') {
      out.push({ id: c.id, messages: steps.flatMap((s) => s.messages), turns: steps.map((s) => s.settings) });
    } else {
      steps.forEach((s, k) => out.push({ id: `${c.id}/${k + 1}`, messages: s.messages, turns: [{ maxTokens: s.settings.maxTokens }] }));
    }
    // An agentic trace's sub-agents: their self-contained turns too, each a conversation of its own.
    c.forks?.forEach(add);
  };
  conversations.forEach(add);
  return out;
}

/** One turn's messages (its prompt, or its pre-formatted messages, then the stand-in answer) and its settings. */
function stepOf(text: HashBlockText, trace: TraceSession, turn: TraceTurn, k: number): { messages: ChatMessage[]; settings: TurnSettings } {
  const prompt: ChatMessage[] = turn.messages ?? [{ role: 'user', content: text.prompt(turn.hashIds, turn.inputLength, trace.blockSize) }];
  const answer: ChatMessage = { role: 'assistant', content: text.block(ANSWER_BLOCK_BASE + k, turn.outputLength) };
  const settings: TurnSettings = { maxTokens: turn.outputLength };
  if (k > 0 && turn.delayMs !== undefined) settings.thinkTimeSec = turn.delayMs / 1000;
  return { messages: [...prompt, answer], settings };
}
