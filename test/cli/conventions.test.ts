import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/scripted-server.js';
import { tempDir } from '../helpers/tmp.js';

// Issue 18 part 4: --json, shell completion, and the countdown while the server is not up yet.

// Runs use the simulator's fast cpu-tiny profile: these tests check output conventions, not the demo's timings.
describe('chatload run --json', () => {
  test('stdout is one JSON object with the summary; the table and status lines go to stderr', { timeout: 60_000 }, async () => {
    const dir = tempDir('cli-json');
    const result = await runCli(['run', '-n', '12', '--json', '--sim-profile', 'cpu-tiny', '--output-dir', join(dir, 'out')]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `one line on stdout, got: ${result.stdout}`);
    const doc = JSON.parse(lines[0]!) as { summary: { completed: number; requests: number }; exit_code: number; stop_reason: string; files: { results: string } };
    assert.equal(doc.summary.requests, 12);
    assert.ok(doc.summary.completed > 0);
    assert.equal(doc.exit_code, 0);
    assert.equal(doc.stop_reason, 'max_requests');
    assert.match(doc.files.results, /results\.json$/);
    assert.match(result.stderr, /chatload run: /, 'the summary table went to stderr');
    assert.match(result.stderr, /chatload: wrote /);
  });
});

describe('chatload run --repeat', () => {
  test('runs the benchmark n times in repeat-i folders and writes each metric\'s interval to repeats.json', { timeout: 90_000 }, async () => {
    const dir = join(tempDir('cli-repeat'), 'out');
    const result = await runCli(['run', '-n', '6', '-p', '2', '--repeat', '2', '--sim-profile', 'cpu-tiny', '--output-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(readFileSync(join(dir, 'repeats.json'), 'utf8')) as { repeat: number; runs: string[]; metrics: Array<{ key: string; values: Array<number | null>; mean: number | null; ci95_half_width: number | null }> };
    assert.equal(doc.repeat, 2);
    assert.deepEqual(doc.runs, [join(dir, 'repeat-1'), join(dir, 'repeat-2')]);
    for (const run of doc.runs) assert.ok(existsSync(join(run, 'results.json')));
    const rate = doc.metrics.find((m) => m.key === 'request_throughput')!;
    assert.equal(rate.values.length, 2);
    assert.ok(rate.values.every((v) => v !== null && v > 0));
    assert.ok(rate.ci95_half_width !== null && rate.ci95_half_width >= 0);
    assert.match(result.stdout, /chatload run --repeat 2: mean and 95% confidence interval/);
    // Issue #34: a line per repetition and one table of intervals, not two full summaries.
    const lines = result.stdout.split('\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('repetition ')).map((l) => l.replace(/:.*-> /, ' -> ')), [`repetition 1/2 -> ${join(dir, 'repeat-1')}`, `repetition 2/2 -> ${join(dir, 'repeat-2')}`]);
    assert.match(lines[0]!, /^repetition 1\/2: completed 6, failed 0, [\d.]+ req\/s, TTFT p50 [\d.]+ ms, E2EL p50 [\d.]+ ms -> /);
    assert.doesNotMatch(result.stdout, /^chatload run: /m, "no run's full summary");
    assert.doesNotMatch(result.stdout, /per turn/);
    assert.equal(lines.filter((l) => l.startsWith('┌')).length, 1, 'one table');
    const row = lines.find((l) => l.startsWith('│ request_throughput '))!;
    const cells = row.split('│').slice(1, -1).map((c) => c.trim());
    assert.deepEqual(cells.slice(5), rate.values.map((v) => v!.toFixed(2)), "each run's value, as repeats.json has it");
    assert.match(result.stderr, new RegExp(`chatload: wrote ${join(dir, 'repeats.json')}, ${join(dir, 'repeats.html')}`));
    // repeats.html: self-contained like every report, the intervals and a link to each repetition's report.
    const html = readFileSync(join(dir, 'repeats.html'), 'utf8');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    assert.doesNotMatch(html, /<script|\bsrc=|<link/i);
    assert.match(html, /<title>chatload run --repeat 2: chatload-sim<\/title>/);
    assert.match(html, /<th>request_throughput<\/th><td>req\/s<\/td><td class="num">[\d.]+<\/td><td class="num">[\d.]+<\/td>/);
    assert.match(html, /<a href="repeat-1\/report\.html">report<\/a>/);
    assert.match(html, /<a href="repeat-2\/report\.html">report<\/a>/);
  });
});

describe('chatload completion', () => {
  test('bash: the script parses, and completes commands and run\'s flags', { timeout: 60_000 }, async () => {
    const result = await runCli(['completion', 'bash']);
    assert.equal(result.code, 0, result.stderr);
    const file = join(tempDir('cli-completion'), 'chatload.bash');
    writeFileSync(file, result.stdout);
    const parse = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
    assert.equal(parse.status, 0, parse.stderr);
    const complete = (words: string[]): string[] => {
      const script = `source ${JSON.stringify(file)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}; _chatload; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
      return out.stdout.split('\n').filter((l) => l !== '');
    };
    assert.deepEqual(complete(['chatload', 'sw']), ['sweep']);
    const runFlags = complete(['chatload', 'run', '--']);
    for (const flag of ['--url', '--num-clients', '--max-num-requests', '--progress', '--json', '--quiet', '--no-early-stop', '--help']) {
      assert.ok(runFlags.includes(flag), `run completes ${flag}`);
    }
    assert.deepEqual(complete(['chatload', 'run', '--num-cl']), ['--num-clients']);
    assert.ok(complete(['chatload', 'sweep', '--']).includes('--concurrency'), "sweep's own flags");
    assert.ok(complete(['chatload', 'compare', '--']).includes('--html'), "compare's flags, from commander");
    // Issue #34: the subcommands of convert and trace, their flags, the words a flag takes, completion's shells.
    assert.deepEqual(complete(['chatload', 'convert', '']), ['sharegpt', '--help']);
    assert.deepEqual(complete(['chatload', 'trace', '']), ['stats', 'synthesize', '--help']);
    assert.deepEqual(complete(['chatload', 'convert', 'sharegpt', '--max-i']), ['--max-items']);
    assert.deepEqual(complete(['chatload', 'trace', 'stats', '--kv']), ['--kv-cache-tokens']);
    assert.deepEqual(complete(['chatload', 'run', '--endpoint', '']), ['chat', 'responses', 'completions']);
    assert.deepEqual(complete(['chatload', 'sweep', '--progress', '']), ['auto', 'panel', 'plain', 'off']);
    assert.deepEqual(complete(['chatload', 'run', '--progress', 'p']), ['panel', 'plain']);
    assert.deepEqual(complete(['chatload', 'completion', '']), ['bash', 'zsh', 'fish']);
    assert.deepEqual(complete(['chatload', 'schema', '']), ['results', 'record'], "schema's names (issue #32)");
  });

  test('zsh: a native script that compinit registers, offering the commands and each command\'s flags (where zsh is installed: .ci/run installs it)', { timeout: 60_000 }, async () => {
    const result = await runCli(['completion', 'zsh']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^#compdef chatload\n/);
    for (const name of ['run', 'sweep', 'report', 'compare', 'merge', 'completion']) assert.match(result.stdout, new RegExp(`\\n {4}'${name}:`));
    assert.match(result.stdout, /'--num-clients\[/);
    if (spawnSync('zsh', ['--version']).status !== 0) return;
    const script = join(tempDir('zsh-completion'), '_chatload');
    writeFileSync(script, result.stdout);
    const parse = spawnSync('zsh', ['-n', script], { encoding: 'utf8' });
    assert.equal(parse.status, 0, parse.stderr);
    // Loaded after compinit, as ~/.zshrc does: compdef registers _chatload for chatload.
    const compdir = join(tempDir('zsh-compdump'), 'zcompdump');
    const registered = spawnSync('zsh', ['-f', '-c', `autoload -Uz compinit && compinit -u -d ${compdir} && source ${script} && print -r -- $_comps[chatload]`], { encoding: 'utf8' });
    assert.equal(registered.stdout.trim(), '_chatload', registered.stderr);
    // The function itself, with zsh's _describe and _arguments standing in to print what they are given.
    const offer = (words: string[]): string[] => {
      const run = spawnSync('zsh', ['-f', '-c', `compdef() { :; }; source ${script}; _describe() { print -l -- \${(P)2} }; _arguments() { print -l -- "$@" }; words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _chatload`], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      return run.stdout.split('\n');
    };
    assert.ok(offer(['chatload', '']).some((l) => l.startsWith('sweep:')), 'the commands, described');
    assert.ok(offer(['chatload', 'sweep', '--con']).some((l) => l.startsWith('--concurrency[')), "sweep's own flags");
    assert.ok(offer(['chatload', 'run', '-']).some((l) => l.startsWith('--num-clients[')), "run's flags");
    assert.ok(offer(['chatload', 'run', '--endpoint', '']).some((l) => l.startsWith('--endpoint[') && l.endsWith(':value:(chat responses completions)')), "--endpoint's words");
    assert.ok(offer(['chatload', 'convert', '']).some((l) => l.startsWith('sharegpt:')), "convert's subcommand, described");
    assert.ok(offer(['chatload', 'trace', 'stats', '--']).some((l) => l.startsWith('--kv-cache-tokens[')), "trace stats' flags");
    assert.ok(offer(['chatload', 'completion', '']).includes('1:shell:(bash zsh fish)'), "completion's shells");
  });

  test('fish: a native script (complete -c chatload) with the commands, subcommands, flags and their words; fish -n parses it and completes with it where fish is installed (.ci/run installs it)', { timeout: 60_000 }, async () => {
    const result = await runCli(['completion', 'fish']);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n');
    assert.match(lines[0]!, /^# chatload fish completion/);
    const has = (pattern: RegExp, what: string): void => assert.ok(lines.some((l) => pattern.test(l)), what);
    has(/^complete -c chatload -n 'test \(count \(commandline -opc\)\) -eq 1' -f -a sweep -d '/, 'the commands, described');
    has(/^complete -c chatload -n '__chatload_at convert' -f -a sharegpt -d '/, "convert's subcommand");
    has(/^complete -c chatload -n '__chatload_at trace' -f -a stats -d '/, "trace's subcommand");
    has(/^complete -c chatload -n '__chatload_on convert sharegpt' -l max-items -r -d '/, "convert sharegpt's flags");
    has(/^complete -c chatload -n '__chatload_on run' -s p -l num-clients -r -d '/, 'a short and a long flag');
    has(/^complete -c chatload -n '__chatload_on run' -l endpoint -x -a 'chat responses completions' -d '/, "--endpoint's words");
    has(/^complete -c chatload -n '__chatload_on sweep' -l progress -x -a 'auto panel plain off' -d '/, "--progress's words");
    has(/^complete -c chatload -n '__chatload_at completion' -f -a 'bash zsh fish'$/, "completion's shells");
    // A help text's quote is escaped for fish's single quotes.
    has(/-l image-dir -r -d 'folder of LLaVA-style items\\' "image" files/, 'quotes escaped');
    if (spawnSync('fish', ['--version']).status !== 0) return;
    const script = join(tempDir('fish-completion'), 'chatload.fish');
    writeFileSync(script, result.stdout);
    const parse = spawnSync('fish', ['-n', script], { encoding: 'utf8' });
    assert.equal(parse.status, 0, parse.stderr);
    const complete = (line: string): string[] => {
      const out = spawnSync('fish', ['--no-config', '-c', `source ${script}; complete -C ${JSON.stringify(line)}`], { encoding: 'utf8' });
      assert.equal(out.stderr, '');
      return out.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0]!);
    };
    assert.deepEqual(complete('chatload convert '), ['sharegpt']);
    assert.deepEqual(complete('chatload run --endpoint ').sort(), ['chat', 'completions', 'responses']);
    assert.deepEqual(complete('chatload completion ').sort(), ['bash', 'fish', 'zsh']);
    assert.deepEqual(complete('chatload trace stats --kv'), ['--kv-cache-tokens']);
  });

  test('another shell is a one-line error, exit 2', { timeout: 30_000 }, async () => {
    const result = await runCli(['completion', 'tcsh']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim(), 'chatload: completion: expected bash, zsh or fish, got "tcsh"');
  });
});

describe('waiting for the server', () => {
  test('a server that does not answer gets a countdown line before the error', { timeout: 30_000 }, async () => {
    const port = await closedPort();
    const dir = tempDir('cli-countdown');
    const result = await runCli(['run', '-u', `http://127.0.0.1:${port}`, '--ready-timeout-sec', '2', '--output-dir', dir]);
    assert.equal(result.code, 1, result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.match(lines[0]!, new RegExp(`^chatload: waiting for http://127\\.0\\.0\\.1:${port} to answer: [01] s left \\(--ready-timeout-sec\\); last: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`));
    assert.match(lines.at(-1)!, /^chatload: cannot reach the server at /);
  });
});

describe('chatload sweep --json', () => {
  test('stdout is one JSON object: sweep.json\'s document with the files; the point lines and -v\'s request lines go to stderr', { timeout: 60_000 }, async () => {
    const dir = join(tempDir('cli-sweep-json'), 'out');
    const result = await runCli(['sweep', '--concurrency', '1,2', '-n', '4', '--json', '-v', '--sim-profile', 'cpu-tiny', '--output-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `one line on stdout, got: ${result.stdout}`);
    const doc = JSON.parse(lines[0]!) as { points: Array<{ value: number; completed: number }>; files: { summary: string; html: string }; output_dir: string };
    assert.deepEqual(doc.points.map((p) => p.value), [1, 2]);
    assert.ok(doc.points.every((p) => p.completed === 4));
    const { files, output_dir: outputDir, ...written } = doc;
    assert.deepEqual(written, JSON.parse(readFileSync(files.summary, 'utf8')), 'the same document as sweep.json');
    assert.equal(outputDir, dir);
    assert.match(result.stderr, /^concurrency 1: [\d.]+ req\/s/m, 'the point lines went to stderr');
    assert.match(result.stderr, /^concurrency 2: /m);
    // -v: each request's line, as in run (sweep accepted -v and printed nothing before).
    assert.equal(result.stderr.split('\n').filter((l) => / turn \d+ \(client \d+\): ttft [\d.]+ ms/.test(l)).length, 8, result.stderr);
  });
});

describe('chatload sweep --repeat', () => {
  test('each point runs n times and its line shows means with their interval; --search refuses it in one line', { timeout: 90_000 }, async () => {
    const dir = join(tempDir('cli-sweep-repeat'), 'out');
    const result = await runCli(['sweep', '--concurrency', '1', '--repeat', '2', '-n', '4', '--sim-profile', 'cpu-tiny', '--output-dir', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^concurrency 1 \(mean ± 95% CI of 2\): [\d.]+ ± [\d.]+ req\/s, TTFT p50 [\d.]+ ± [\d.]+ ms/m);
    for (const run of ['repeat-1', 'repeat-2']) assert.ok(existsSync(join(dir, '01-concurrency-1', run, 'results.json')));
    for (const file of ['repeats.json', 'repeats.html']) assert.ok(existsSync(join(dir, '01-concurrency-1', file)), file);
    const refused = await runCli(['sweep', '--search', '--min-rate', '1', '--max-rate', '2', '--goodput', 'e2el:1000', '--repeat', '2']);
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr.trim(), 'chatload: sweep --repeat: not with --search; repeat chosen rates with --session-rates LIST --repeat N');
  });
});
