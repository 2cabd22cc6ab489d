#!/usr/bin/env node
// The `chatload` command: runs the compiled CLI (built by `npm run build`, which `npm ci` runs as `prepare`).
import '../dist/cli/entry.js';
