// The end of `chatload run` renders report.html from the results.json text it has just written, not from the file read
// back and checked against the ~100 KB schema (issue #33, part 5: a fixed cost at every run's end). The report must be
// the one `chatload report` renders from the same folder, and the results it is rendered from the ones read back.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runBenchmark } from '../../src/benchmark/run-benchmark.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { startSimulator } from '../../src/sim/index.js';
import { readResultsFile, writtenResults } from '../../src/store/results-reader.js';
import { loadRunData } from '../../src/store/run-data.js';
import { syntheticConversations, writeDataset } from '../helpers/datasets.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('run-report-written');
after(() => rmSync(dir, { recursive: true, force: true }));

test("a run's report.html is the one `chatload report` renders from its folder, and its results the file's", { timeout: 120_000 }, async () => {
  const sim = await startSimulator({ profile: 'cpu-tiny' });
  try {
    const inputFile = writeDataset(dir, syntheticConversations({ count: 6, userTurns: () => 3, prefixWords: 40, userWords: 10, answerWords: 10 }));
    const outputDir = join(dir, 'out');
    // An api key in the options: results.json redacts it, and so must what the report is rendered from.
    const result = await runBenchmark({ url: sim.url, inputFile, numClients: 2, outputDir, report: true, earlyStop: false, apiKey: 'sk-test-secret-1234' });
    assert.equal(result.summary.completed, 18);
    const resultsPath = join(outputDir, 'results.json');
    assert.deepEqual(writtenResults(resultsPath, readFileSync(resultsPath, 'utf8')), readResultsFile(resultsPath));
    const html = readFileSync(join(outputDir, 'report.html'), 'utf8');
    assert.ok(!html.includes('sk-test-secret-1234'), 'the key is not in the report');
    assert.equal(html, renderHtmlReport(await loadRunData(outputDir)));
  } finally {
    await sim.close();
  }
});
