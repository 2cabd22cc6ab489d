import { setFlagsFromString } from 'node:v8';
import { growHeapFaster } from '../util/heap-growth.js';

/*
 * V8 flags the `chatload` command sets for itself (imported first by entry.ts, so they are set before the program
 * runs; a library user's process keeps its own defaults).
 *
 * --liftoff-only: undici parses HTTP/1 with llhttp compiled to WebAssembly, and V8 tiers llhttp's one large parser
 * function (33 KB of wasm) up to TurboFan after its first response or two: 90-180 ms of CPU on a background thread,
 * paid during start-up by every run (a quarter of `run`'s start-up CPU, issue 17). Liftoff's code for it measured as
 * fast on chatload's traffic (2,000 streamed responses of 128 chunks through undici: the same CPU within 2%), so the
 * compile bought nothing: wasm stays on Liftoff, V8's baseline tier. The flag has been in V8 since 2020 (Node 16) and
 * still is; an unknown flag would only print a line, so it is set only on the Node majors it was checked on.
 */
const major = Number(process.versions.node.split('.')[0]);
const checked = major >= 20 && major <= 24;
if (checked) setFlagsFromString('--liftoff-only');

// The old generation's growth between full GCs (util/heap-growth.ts): V8 would pick a full GC every ~1.6 s of a run.
if (checked) growHeapFaster();
