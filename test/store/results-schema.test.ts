// The published schemas (issue #32, part 2): schema/*.schema.json are what the types generate, their shapes stand
// under the schema_version they were recorded with (a changed schema needs a bump), and `chatload schema` prints them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RESULTS_SCHEMA_VERSION } from '../../src/store/schema-version.js';
import { currentVersion, generateSchema, readVersions, SCHEMAS, shapeHash, versionProblem, type SchemaKey } from '../../tools/schema-gen.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/repo.js';

const KEYS = Object.keys(SCHEMAS) as SchemaKey[];
const committed = (key: SchemaKey): string => readFileSync(join(REPO_ROOT, SCHEMAS[key].file), 'utf8');
const committedHashes = (): Record<SchemaKey, string> => Object.fromEntries(KEYS.map((key) => [key, shapeHash(committed(key))])) as Record<SchemaKey, string>;

describe('the published schemas', () => {
  test('schema/results.schema.json and schema/record.schema.json are what the types generate (run `npm run schema` after changing them)', { timeout: 120_000 }, () => {
    assert.equal(currentVersion(REPO_ROOT), RESULTS_SCHEMA_VERSION);
    for (const key of KEYS) {
      assert.equal(committed(key), generateSchema(REPO_ROOT, key, RESULTS_SCHEMA_VERSION), `${SCHEMAS[key].file} is stale: run \`npm run schema\``);
    }
  });

  test('their shapes are the ones recorded for this schema_version (a changed schema needs `npm run schema -- --bump ...`)', () => {
    const versions = readVersions(REPO_ROOT);
    assert.equal(versionProblem(versions, RESULTS_SCHEMA_VERSION, committedHashes()), undefined);
    // Versions only go up: the current one is the highest recorded.
    const order = (v: string): number[] => v.split('.').map(Number);
    const highest = Object.keys(versions).sort((a, b) => { const [x, y] = [order(a), order(b)]; return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!; }).at(-1);
    assert.equal(highest, RESULTS_SCHEMA_VERSION);
  });

  test('a field retyped changes the shape and is refused under the same version; a description alone does not', () => {
    const versions = readVersions(REPO_ROOT);
    const schema = JSON.parse(committed('results')) as { definitions: Record<string, { properties: Record<string, { type?: unknown; description?: string }> }> };
    const described = structuredClone(schema);
    described.definitions.Summary!.properties.completed!.description = 'reworded';
    assert.equal(versionProblem(versions, RESULTS_SCHEMA_VERSION, { ...committedHashes(), results: shapeHash(JSON.stringify(described)) }), undefined);
    const retyped = structuredClone(schema);
    retyped.definitions.Summary!.properties.completed!.type = 'string';
    const problem = versionProblem(versions, RESULTS_SCHEMA_VERSION, { ...committedHashes(), results: shapeHash(JSON.stringify(retyped)) });
    assert.match(problem ?? '', /^schema\/results\.schema\.json changed since schema_version \d+\.\d+\.\d+ was recorded \(schema\/versions\.json\): run `npm run schema -- --bump minor`/);
    assert.match(versionProblem(versions, '99.0.0', committedHashes()) ?? '', /schema_version 99\.0\.0 is not recorded in schema\/versions\.json: run `npm run schema`/);
  });

  test('chatload schema results|record prints the committed files; results.json names its version', { timeout: 60_000 }, async () => {
    for (const key of KEYS) {
      const printed = await runCli(['schema', key]);
      assert.equal(printed.code, 0, printed.stderr);
      assert.equal(printed.stdout, committed(key));
    }
    assert.match(committed('results'), new RegExp(`"\\$comment": "schema_version ${RESULTS_SCHEMA_VERSION.replace(/\./g, '\\.')};`));
    const bad = await runCli(['schema', 'summary']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^chatload: .*'summary'.*results, record\.?\n$/);
  });
});
