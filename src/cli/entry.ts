import { main } from './main.js';

// The process entry of the `chatload` command (bin/chatload.js loads the compiled copy).
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is closed by now; if a stray handle still kept the loop alive, do not hang the shell on it.
setTimeout(() => process.exit(code), 2000).unref();
