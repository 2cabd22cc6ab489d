// Done-when of issue #14: a generated coding-agent dataset runs against the simulator end to end, with forks.
// `chatload generate` writes the preset (sizes scaled down so the test is quick), `chatload run` replays it against
// the embedded simulator (profile `agentic`, which answers requests with tools by tool calls).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { loadConversations } from '../../src/conversation/index.js';
import { readRequestsJsonl } from '../../src/store/requests-jsonl.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Replays the generated dataset with `extra` flags and checks every step, sub-agent and fork/join of it. */
async function replayAndCheck(dataset: string, out: string, extra: string[]): Promise<void> {
  const sessions = await loadConversations(dataset);
  const children = sessions.flatMap((s) => s.forks ?? []);
  // Answers of 8-16 tokens: the replay's shape (tool calls, forks, joins) is what is checked, not long decodes.
  const run = await runCli(['run', '-i', dataset, '--sim-profile', 'agentic', '-p', '2', '--no-early-stop', '--limit-min-tokens', '8', '--limit-max-tokens', '16', '--output-dir', out, ...extra], { timeoutMs: 110_000 });
  assert.equal(run.code, 0, run.stderr);
  const records = readRequestsJsonl(join(out, 'requests.jsonl'));
  const steps = [...sessions, ...children].reduce((n, c) => n + (c.turns?.length ?? 0), 0);
  assert.equal(records.length, steps, 'every step of every session and sub-agent was sent once');
  assert.ok(records.every((r) => r.status === 'ok'));
  const subAgentRecords = records.filter((r) => r.parent_conversation_id != null);
  assert.equal(subAgentRecords.length, children.reduce((n, c) => n + c.turns!.length, 0));
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { agentic: { tool_call_requests: number; sub_agent_requests: number } };
  assert.ok(results.agentic.tool_call_requests > 0, 'the simulator answered with tool calls');
  assert.equal(results.agentic.sub_agent_requests, subAgentRecords.length);
  // The report's agentic section: steps by context length, and each session with its sub-agents' steps.
  const report = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(report, /<h2>Agentic sessions<\/h2>/);
  assert.match(report, /Steps by context length/);
  for (const s of sessions) assert.ok(report.includes(`<th>${s.id}</th>`), `a row for ${s.id}`);
  // Each sub-agent's first request starts after its parent's fork step was answered.
  for (const child of children) {
    const first = records.find((r) => r.conversation_id === child.id && r.turn === 1)!;
    const parentStep = sessions.find((s) => s.id === child.parent!.id)!;
    const forkStep = parentStep.messages.slice(0, child.parent!.at + 1).filter((m) => m.role === 'assistant').length;
    const parentRecord = records.find((r) => r.conversation_id === parentStep.id && r.turn === forkStep)!;
    assert.ok(first.sent_at_ms >= parentRecord.done_at_ms, `${child.id} starts after its fork point`);
    const next = records.find((r) => r.conversation_id === parentStep.id && r.turn === forkStep + 1);
    const lastOfChild = records.filter((r) => r.conversation_id === child.id).at(-1)!;
    if (next !== undefined) assert.ok(next.sent_at_ms >= lastOfChild.done_at_ms, `the parent waits for ${child.id}`);
  }
}

describe('agentic sessions end to end', () => {
  let dataset = '';
  let dir = '';
  // One dataset for both replays: generated once.
  before(async () => {
    dir = tempDir('agentic-cli');
    const config = join(dir, 'coding.json');
    writeFileSync(
      config,
      JSON.stringify({
        filetype: 'generate_agentic_sessions',
        preset: 'coding-agent',
        num_sessions: 2,
        system_prompt_tokens: { distribution: 'constant', value: 800 },
        steps_per_turn: { distribution: 'uniform', min: 6, max: 10 },
        tool_output_tokens: { distribution: 'lognormal', average: 200, max: 2000 },
        think_time_sec: { distribution: 'constant', value: 0 },
        sub_agents: {
          probability: 0.5,
          children: { distribution: 'constant', value: 2 },
          steps: { distribution: 'uniform', min: 1, max: 3 },
          task_tokens: { distribution: 'constant', value: 40 },
          report_tokens: { distribution: 'constant', value: 100 },
        },
      }),
    );
    dataset = join(dir, 'coding.jsonl');
    const generated = await runCli(['generate', '-i', config, '-o', dataset, '--seed', '3']);
    assert.equal(generated.code, 0, generated.stderr);
    assert.match(generated.stderr, /2 agentic sessions, [1-9]\d* sub-agents, \d+ steps, .*every message exact/);
    const sessions = await loadConversations(dataset);
    assert.equal(sessions.length, 2);
    const children = sessions.flatMap((s) => s.forks ?? []);
    assert.ok(children.length >= 2, 'the dataset has sub-agents');
  }, { timeout: 60_000 });

  test('generate the coding-agent preset with forks, run it against the simulator', { timeout: 120_000 }, async () => {
    await replayAndCheck(dataset, join(dir, 'run'), []);
  });

  // A session's sub-agents are items of its dataset entry (`forks`), so a worker thread that owns a session owns its
  // sub-agents too: fork and join happen on one event loop whatever --workers says.
  test('the same with --workers 2: every sub-agent runs after its fork point and its parent waits for it', { timeout: 120_000 }, async () => {
    await replayAndCheck(dataset, join(dir, 'run-workers'), ['--workers', '2']);
  });
});
