import { Template } from '@huggingface/jinja';
import { ConfigError } from '../errors/index.js';
import { renderedText } from './chat-message.js';
import type { ApplyOptions, ChatMessage, ChatTemplate } from './types.js';

/** The special-token strings a chat template may use (`{{ bos_token }}` ...), from tokenizer_config.json. */
export interface TemplateSpecialTokens {
  bos_token?: string;
  eos_token?: string;
  pad_token?: string;
  unk_token?: string;
}

/** A token entry of tokenizer_config.json: a string, or an AddedToken object `{ "content": ... }`. */
export function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string') {
    return (value as { content: string }).content;
  }
  return undefined;
}

/**
 * Picks the chat template source from a tokenizer_config.json `chat_template` value: a string, or a list of
 * `{ name, template }` (the one named `default`, else the first).
 */
export function chatTemplateSource(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const entries = value.filter((e): e is { name?: unknown; template: string } => typeof e?.template === 'string');
    return (entries.find((e) => e.name === 'default') ?? entries[0])?.template;
  }
  return undefined;
}

/**
 * A model's own Jinja chat template (`@huggingface/jinja`), rendered with the model's special tokens and
 * `add_generation_prompt`, as vLLM and transformers render it. A template that raises (`raise_exception`, built into
 * the Jinja runtime, e.g. Llama-2's on roles that do not alternate) becomes a ConfigError naming the template.
 */
export function jinjaChatTemplate(name: string, source: string, specials: TemplateSpecialTokens): ChatTemplate {
  let compiled: Template;
  try {
    compiled = new Template(source);
  } catch (error) {
    throw new ConfigError(`${name}: the chat template does not parse: ${(error as Error).message}`, { cause: error });
  }
  return {
    name,
    apply(messages: readonly ChatMessage[], options: ApplyOptions): string {
      try {
        return compiled.render({
          // Text only, tool calls as text (renderedText): templates differ on the tool shape they expect, a text model's
          // template cannot render image parts, and local counts need only the text.
          messages: messages.map((m) => ({ role: m.role, content: renderedText(m) })),
          // The tool definitions as the template takes them (transformers' `tools`): a template without tool support ignores them.
          ...(options.tools !== undefined && options.tools.length > 0 ? { tools: options.tools } : {}),
          add_generation_prompt: options.addGenerationPrompt,
          bos_token: specials.bos_token ?? '',
          eos_token: specials.eos_token ?? '',
          pad_token: specials.pad_token ?? '',
          unk_token: specials.unk_token ?? '',
        });
      } catch (error) {
        throw new ConfigError(`${name}: the chat template failed: ${(error as Error).message}`, { cause: error });
      }
    },
  };
}
