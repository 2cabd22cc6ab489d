/**
 * The built-in agentic presets (docs/DATASETS.md, "Agentic sessions"): a config naming `"preset"` takes every key
 * from here and overrides what it gives.
 *
 * - `coding-agent`: a coding agent such as Claude Code, Codex or OpenHands: ~10k tokens of system prompt and tool
 *   definitions, one or two user requests answered by 30-100 tool-calling steps, heavy-tailed tool outputs (file reads
 *   and test logs), so the history grows past 100k tokens; now and then it forks sub-agents.
 * - `customer-service`: a support assistant: short system prompt, a few tools, several user turns with 0-2 lookups each.
 */
export const AGENTIC_PRESETS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = Object.freeze({
  'coding-agent': Object.freeze({
    num_sessions: 4,
    system_prompt_tokens: { distribution: 'constant', value: 4000 },
    num_tools: 12,
    tool_definition_tokens: { distribution: 'uniform', min: 350, max: 650 },
    user_turns: { distribution: 'uniform', min: 1, max: 2 },
    steps_per_turn: { distribution: 'uniform', min: 30, max: 50 },
    parallel_calls: { distribution: 'zipf', alpha: 2.5, max: 4 },
    user_tokens: { distribution: 'lognormal', average: 300, max: 2000 },
    tool_argument_tokens: { distribution: 'uniform', min: 15, max: 80 },
    // Heavy-tailed: most outputs are short (a grep, a small edit), some are whole files and test logs.
    tool_output_tokens: { distribution: 'lognormal', average: 1200, median_ratio: 0.45, max: 16000 },
    assistant_tokens: { distribution: 'lognormal', average: 120, max: 800 },
    think_time_sec: { distribution: 'exponential', mean: 0.5, max: 5 },
    sub_agents: {
      probability: 0.04,
      children: { distribution: 'uniform', min: 2, max: 3 },
      steps: { distribution: 'uniform', min: 3, max: 8 },
      task_tokens: { distribution: 'uniform', min: 80, max: 200 },
      report_tokens: { distribution: 'uniform', min: 200, max: 600 },
    },
  }),
  'customer-service': Object.freeze({
    num_sessions: 16,
    system_prompt_tokens: { distribution: 'constant', value: 600 },
    num_tools: 4,
    tool_definition_tokens: { distribution: 'uniform', min: 80, max: 160 },
    user_turns: { distribution: 'uniform', min: 3, max: 6 },
    steps_per_turn: { distribution: 'uniform', min: 0, max: 2 },
    parallel_calls: { distribution: 'constant', value: 1 },
    user_tokens: { distribution: 'uniform', min: 15, max: 60 },
    tool_argument_tokens: { distribution: 'uniform', min: 8, max: 20 },
    tool_output_tokens: { distribution: 'lognormal', average: 150, max: 800 },
    assistant_tokens: { distribution: 'uniform', min: 30, max: 120 },
    think_time_sec: { distribution: 'uniform', min: 2, max: 8 },
  }),
});
