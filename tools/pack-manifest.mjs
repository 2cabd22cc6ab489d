// The packed package.json declares no install script (issue #34, item 6). A clone's `npm ci` builds dist/ through
// "prepare" (tools/prepare.mjs), but the tarball ships neither tools/ nor the sources, and npm warns about every
// install script of a package it installs (`npm warn install-scripts ... chatload@0.1.0 (prepare: ...)`), though a
// tarball's "prepare" never runs. npm packs the package.json on disk, so around `npm pack` (and `npm publish`):
//
//   node tools/pack-manifest.mjs strip     (package.json "prepack", after the build) writes package.json without
//                                          its install scripts, the original kept as package.json.unpacked
//   node tools/pack-manifest.mjs restore   ("postpack") puts the original back, byte for byte
//
// A pack that died between the two leaves package.json.unpacked: the next strip or restore puts it back first.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

/** The lifecycle scripts npm runs when it installs a package (and warns about: `npm install-scripts ls`). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

const manifest = fileURLToPath(new URL('../package.json', import.meta.url));
const saved = `${manifest}.unpacked`;

function restore() {
  if (existsSync(saved)) renameSync(saved, manifest);
}

function strip() {
  restore();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  const scripts = Object.fromEntries(Object.entries(pkg.scripts ?? {}).filter(([name]) => !INSTALL_SCRIPTS.includes(name)));
  writeFileSync(saved, text);
  writeFileSync(manifest, `${JSON.stringify({ ...pkg, scripts }, null, 2)}\n`);
}

const command = process.argv[2];
if (command === 'strip') strip();
else if (command === 'restore') restore();
else {
  console.error(`chatload: tools/pack-manifest.mjs: expected strip or restore, got ${JSON.stringify(command ?? '')}`);
  process.exit(2);
}
