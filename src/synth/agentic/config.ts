import { ConfigError } from '../../errors/index.js';
import { parseDistribution, type Distribution } from '../distributions.js';
import { AGENTIC_PRESETS } from './presets.js';
import { shownValue } from '../../errors/shown-value.js';

/** The `filetype` of an agentic generation config. */
export const AGENTIC_FILETYPE = 'generate_agentic_sessions';

/** Sub-agent forks: at a step, with `probability`, the session spawns `children` sub-agents of their own steps. */
export interface SubAgentConfig {
  probability: number;
  children: Distribution;
  steps: Distribution;
  taskTokens: Distribution;
  /** Tokens of each child's report, returned to the parent as the spawn call's tool result. */
  reportTokens: Distribution;
}

/** A validated agentic generation config (docs/DATASETS.md, "Agentic sessions"). Token sizes are in tokens. */
export interface AgenticConfig {
  file: string;
  numSessions: number;
  systemPromptTokens: Distribution;
  numTools: number;
  toolDefinitionTokens: Distribution;
  userTurns: Distribution;
  /** Tool-calling steps per user turn, before the turn's text answer. */
  stepsPerTurn: Distribution;
  /** Calls per step (more than 1: parallel calls). */
  parallelCalls: Distribution;
  userTokens: Distribution;
  toolArgumentTokens: Distribution;
  toolOutputTokens: Distribution;
  assistantTokens: Distribution;
  /** Seconds before each step's request (think time / tool execution); undefined for none. */
  thinkTimeSec: Distribution | undefined;
  subAgents: SubAgentConfig | undefined;
}

/** True when `value` is an agentic generation config. */
export function isAgenticConfig(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>).filetype === AGENTIC_FILETYPE;
}

const KEYS = new Set([
  'filetype',
  'preset',
  'num_sessions',
  'system_prompt_tokens',
  'num_tools',
  'tool_definition_tokens',
  'user_turns',
  'steps_per_turn',
  'parallel_calls',
  'user_tokens',
  'tool_argument_tokens',
  'tool_output_tokens',
  'assistant_tokens',
  'think_time_sec',
  'sub_agents',
]);

function dist(record: Record<string, unknown>, key: string, file: string): Distribution {
  if (record[key] === undefined) throw new ConfigError(`${file}: ${key}: required (a distribution, e.g. {"distribution": "constant", "value": 100})`);
  const d = parseDistribution(record[key], `${file}: ${key}`);
  if (d.range[0] < 0) throw new ConfigError(`${file}: ${key}: ${d.describe} can be negative; expected sizes >= 0`);
  return d;
}

function count(value: unknown, key: string, file: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new ConfigError(`${file}: ${key}: expected an integer >= ${min}, got ${shownValue(value)}`);
  return value;
}

/**
 * Validates an agentic generation config. A `preset` (`coding-agent`, `customer-service`) supplies every key; the
 * config's own keys override it. Every problem is a ConfigError naming the file and the key.
 */
export function parseAgenticConfig(value: unknown, file: string): AgenticConfig {
  const given = value as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!KEYS.has(key)) throw new ConfigError(`${file}: unknown key "${key}"; known keys: ${[...KEYS].join(', ')}`);
  let record = given;
  if (given.preset !== undefined) {
    const preset = typeof given.preset === 'string' && Object.hasOwn(AGENTIC_PRESETS, given.preset) ? AGENTIC_PRESETS[given.preset] : undefined;
    if (preset === undefined) throw new ConfigError(`${file}: preset: expected one of ${Object.keys(AGENTIC_PRESETS).join(', ')}, got ${JSON.stringify(given.preset)}`);
    record = { ...preset, ...given };
  }
  let subAgents: SubAgentConfig | undefined;
  if (record.sub_agents !== undefined && record.sub_agents !== null) {
    const s = record.sub_agents as Record<string, unknown>;
    if (typeof s !== 'object' || Array.isArray(s)) throw new ConfigError(`${file}: sub_agents: expected an object`);
    const p = s.probability;
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new ConfigError(`${file}: sub_agents.probability: expected a number in [0, 1], got ${shownValue(p)}`);
    const where = `${file}: sub_agents`;
    subAgents = { probability: p, children: dist(s, 'children', where), steps: dist(s, 'steps', where), taskTokens: dist(s, 'task_tokens', where), reportTokens: dist(s, 'report_tokens', where) };
  }
  return {
    file,
    numSessions: count(record.num_sessions, 'num_sessions', file, 1),
    systemPromptTokens: dist(record, 'system_prompt_tokens', file),
    numTools: count(record.num_tools, 'num_tools', file, 1),
    toolDefinitionTokens: dist(record, 'tool_definition_tokens', file),
    userTurns: dist(record, 'user_turns', file),
    stepsPerTurn: dist(record, 'steps_per_turn', file),
    parallelCalls: dist(record, 'parallel_calls', file),
    userTokens: dist(record, 'user_tokens', file),
    toolArgumentTokens: dist(record, 'tool_argument_tokens', file),
    toolOutputTokens: dist(record, 'tool_output_tokens', file),
    assistantTokens: dist(record, 'assistant_tokens', file),
    thinkTimeSec: record.think_time_sec === undefined ? undefined : dist(record, 'think_time_sec', file),
    subAgents,
  };
}
