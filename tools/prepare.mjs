// `npm install` / `npm ci` in a clone runs this (package.json "prepare"): it builds dist/ (tsc, then the bundle).
// - Under `npm pack` / `npm publish` it does nothing: "prepack" has just built.
// - Without the dev dependencies (`npm ci --omit=dev`) the build cannot run: it says so and keeps a dist/ that is
//   already there, or fails with what to do, never with a bare "tsc: not found" (exit 127).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const command = process.env.npm_command;
if (command === 'pack' || command === 'publish') process.exit(0);

const require = createRequire(import.meta.url);
const has = (name) => {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
};
const missing = ['typescript', 'esbuild'].filter((name) => !has(name));
if (missing.length > 0) {
  const built = existsSync(new URL('../dist/bundle/chatload.js', import.meta.url));
  if (built) {
    console.error(`chatload: not rebuilding dist/: the dev dependencies (${missing.join(', ')}) are not installed (npm ci --omit=dev); using the dist/ already built`);
    process.exit(0);
  }
  console.error(
    `chatload: cannot build dist/: the build needs the dev dependencies (${missing.join(', ')}), which are not installed (npm ci --omit=dev). ` +
      'In a clone run `npm ci` (with dev dependencies); or install the packed tarball (`npm pack`, then `npm install ./chatload-<version>.tgz`), which ships dist/ prebuilt.',
  );
  process.exit(1);
}
// What `npm run build` runs, without needing npm on PATH.
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
execFileSync(process.execPath, ['tools/bundle.mjs'], { cwd: root, stdio: 'inherit' });
