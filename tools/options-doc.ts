// Writes docs/OPTIONS.md from the option tables (src/options/table/*.ts): `npm run docs:options`.
// test/options/options-doc.test.ts fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderOptionsDoc } from '../src/options/docs.js';

const path = fileURLToPath(new URL('../docs/OPTIONS.md', import.meta.url));
writeFileSync(path, renderOptionsDoc());
process.stdout.write(`wrote ${path}\n`);
