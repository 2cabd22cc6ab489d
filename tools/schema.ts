// Writes schema/results.schema.json and schema/record.schema.json from the TypeScript types, and records their shape
// hashes under the current schema_version in schema/versions.json: `npm run schema`. A changed shape under a version
// already recorded is refused (exit 1) until the version is bumped: `npm run schema -- --bump minor|major|patch`
// rewrites RESULTS_SCHEMA_VERSION (src/store/schema-version.ts) and records the new version. The generated files are
// committed; test/store/results-schema.test.ts fails when they are stale or the version was not bumped.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bumped, currentVersion, generateSchema, readVersions, SCHEMAS, shapeHash, VERSION_SOURCE, VERSIONS_FILE, versionProblem, type SchemaKey } from './schema-gen.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const bumpAt = args.indexOf('--bump');
const PARTS = ['major', 'minor', 'patch'] as const;
const given = bumpAt >= 0 ? args[bumpAt + 1] : undefined;
const part = PARTS.find((p) => p === given);
if (bumpAt >= 0 && part === undefined) {
  process.stderr.write(`schema: --bump takes major, minor or patch, got ${given ?? 'nothing'}\n`);
  process.exit(2);
}

let version = currentVersion(root);
const versions = readVersions(root);
if (part !== undefined) {
  const next = bumped(version, part);
  const source = join(root, VERSION_SOURCE);
  writeFileSync(source, readFileSync(source, 'utf8').replace(`RESULTS_SCHEMA_VERSION = '${version}'`, `RESULTS_SCHEMA_VERSION = '${next}'`));
  process.stdout.write(`schema_version ${version} -> ${next} (${VERSION_SOURCE})\n`);
  version = next;
}

const hashes = {} as Record<SchemaKey, string>;
for (const key of Object.keys(SCHEMAS) as SchemaKey[]) {
  const text = generateSchema(root, key, version);
  writeFileSync(join(root, SCHEMAS[key].file), text);
  hashes[key] = shapeHash(text);
  process.stdout.write(`wrote ${SCHEMAS[key].file}\n`);
}
if (versions[version] === undefined) {
  versions[version] = hashes;
  writeFileSync(join(root, VERSIONS_FILE), `${JSON.stringify(versions, null, 2)}\n`);
  process.stdout.write(`recorded schema_version ${version} in ${VERSIONS_FILE}\n`);
}
const problem = versionProblem(versions, version, hashes);
if (problem !== undefined) {
  process.stderr.write(`schema: ${problem}\n`);
  process.exit(1);
}
