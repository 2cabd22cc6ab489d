#!/usr/bin/env node
// The `chatload` command: runs the bundled CLI (dist/bundle/, built by `npm run build`: in a clone `npm ci` runs it
// as "prepare"; a packed tarball ships it prebuilt).
import '../dist/bundle/chatload.js';
