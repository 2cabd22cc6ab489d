// The child process of cli-batch.ts, in plain JS so it starts without tsx: reads a JSON list of argv lists on stdin,
// runs each through the compiled CLI's main() (dist/cli/main.js, what bin/chatload.js runs) with stdout and stderr
// captured, and prints one JSON line of results on the real stdout.
import { main } from '../../dist/cli/main.js';

let input = '';
for await (const chunk of process.stdin) input += chunk.toString();
const argvs = JSON.parse(input);
const realStdout = process.stdout.write.bind(process.stdout);
const realStderr = process.stderr.write.bind(process.stderr);
const results = [];
for (const argv of argvs) {
  let out = '';
  let err = '';
  process.stdout.write = (chunk) => ((out += chunk.toString()), true);
  process.stderr.write = (chunk) => ((err += chunk.toString()), true);
  let code;
  try {
    code = await main(argv);
  } catch (error) {
    // main() must never throw; record it so the test fails on it with the stack.
    err += `main() threw: ${error?.stack ?? String(error)}`;
    code = null;
  } finally {
    process.stdout.write = realStdout;
    process.stderr.write = realStderr;
  }
  results.push({ code, stdout: out, stderr: err });
}
realStdout(`${JSON.stringify(results)}\n`);
process.exit(0);
