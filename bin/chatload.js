#!/usr/bin/env node
// The `chatload` command: runs the compiled CLI (built by `npm run build`, which `npm ci` runs as `prepare`).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
