import { promptParts, renderedParts } from './chat-message.js';
import type { ApplyOptions, ChatMessage, ChatTemplate, IncrementalRendering } from './types.js';

/** Each role's opening markup, made once rather than per message (a Map: a role is data, never an Object key). */
const OPENING = new Map(['system', 'user', 'assistant', 'tool'].map((role) => [role, `<|im_start|>${role}\n`]));

const incremental: IncrementalRendering = {
  renderParts: (m: ChatMessage): string[] => {
    const parts = renderedParts(m, [OPENING.get(m.role) ?? `<|im_start|>${m.role}\n`]);
    parts.push('<|im_end|>\n');
    return parts;
  },
  generationPrompt: '<|im_start|>assistant\n',
};

/**
 * ChatML, the template of Qwen and many other chat models:
 * `<|im_start|>{role}\n{content}<|im_end|>\n` per message (image parts left out), then `<|im_start|>assistant\n` as the generation prompt.
 * An assistant's tool calls follow its text as `<tool_call>{json}</tool_call>` lines (Qwen's form); the request's tool
 * definitions are a system turn before the messages (tokenizer/tools-prompt.ts).
 * It is the default until a model's own template is loaded (datasets issue).
 * It renders message by message (each message's text depends on it alone), so it declares `incremental`.
 */
export const chatmlTemplate: ChatTemplate = {
  name: 'chatml',
  incremental,
  apply(messages: readonly ChatMessage[], options: ApplyOptions): string {
    return promptParts(incremental, messages, options.tools, options.addGenerationPrompt).join('');
  },
};
