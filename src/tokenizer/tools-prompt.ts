import type { ChatMessage } from './types.js';

/*
 * Tool definitions in the prompt. A chat server renders a request's `tools` into the prompt the model sees (vLLM and
 * SGLang pass them to the model's chat template; Qwen's puts them in the system turn), so they are prompt tokens:
 * counted in the server's usage, and cached as part of every request's prefix. A coding agent's definitions are
 * thousands of tokens, the same in every step. chatload's own counts and expected-cache model see them the same way:
 * a model's Jinja template gets `tools` (as transformers' apply_chat_template passes them); the ChatML stand-in, and
 * the simulator with it, render them as one system turn before the messages, in Qwen2.5's words.
 */

/** The system turn's text for `tools`: Qwen2.5's tool prompt, each definition as one line of compact JSON. */
export function toolsPromptText(tools: readonly unknown[]): string {
  return (
    '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
    tools.map((tool) => JSON.stringify(tool)).join('\n') +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/**
 * One system message per tools list, kept: a conversation sends the same list every step, so the prompt's leading
 * message is the very same object turn after turn and is rendered, encoded and counted once (cache-model/prompt-ids.ts
 * and engine/message-tokens.ts key their work by message object).
 */
const toolsMessages = new WeakMap<readonly unknown[], ChatMessage>();

/** The messages as the ChatML stand-in renders them with `tools`: the tools' system turn first, when there are any. */
export function withToolsTurn(messages: readonly ChatMessage[], tools: readonly unknown[] | undefined): readonly ChatMessage[] {
  if (tools === undefined || tools.length === 0) return messages;
  let turn = toolsMessages.get(tools);
  if (turn === undefined) {
    turn = { role: 'system', content: toolsPromptText(tools) };
    toolsMessages.set(tools, turn);
  }
  return [turn, ...messages];
}
