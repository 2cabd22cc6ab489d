// First: a V8 flag applies to what is compiled after it (here: the WebAssembly undici compiles at its first connection).
import './v8-flags.js';
import { main } from './main.js';

// The process entry of the `chatload` command (bin/chatload.js loads the compiled copy).
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is closed by now; if a stray handle still kept the loop alive, do not hang the shell on it.
setTimeout(() => process.exit(code), 2000).unref();
