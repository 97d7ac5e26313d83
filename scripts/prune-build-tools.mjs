#!/usr/bin/env node
// Production image only: after `npm prune --omit=dev`, removes the packages that native modules need
// only to compile at install time (node-gyp and what only it pulls in, nan's headers, re2's prebuilt
// downloader). The compiled .node files stay; nothing at run time requires these packages.
// Walks package-lock.json's dependency graph from the root's production dependencies, not entering the
// build-only packages, and deletes every installed package the walk does not reach.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const BUILD_ONLY = new Set(['node-gyp', 'nan', 'node-addon-api', 'install-artifact-from-github']);
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = lock.packages;

/** Node's resolution inside the lock's tree: nearest node_modules/NAME walking up from `from`. */
function resolve(from, name) {
  for (let dir = from; ; dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '') {
    const p = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (pkgs[p]) return p;
    if (!dir) return null;
  }
}

const reached = new Set();
const queue = [''];
while (queue.length) {
  const at = queue.pop();
  const meta = pkgs[at] ?? {};
  const deps = { ...meta.dependencies, ...meta.optionalDependencies };
  for (const name of Object.keys(deps)) {
    if (BUILD_ONLY.has(name)) continue;
    const p = resolve(at, name);
    if (p && !reached.has(p)) {
      reached.add(p);
      queue.push(p);
    }
  }
}
let removed = 0;
for (const p of Object.keys(pkgs)) {
  if (!p || reached.has(p) || !existsSync(p)) continue;
  // A package nested under a removed one goes with it.
  rmSync(p, { recursive: true, force: true });
  removed++;
}
for (const bin of ['node-gyp', 'node-which', 'nopt', 'semver', 'install-from-cache', 'save-to-github-cache']) {
  const link = join('node_modules/.bin', bin);
  if (existsSync(link) || existsSync(dirname(link))) rmSync(link, { force: true });
}
// Native modules: keep the compiled addon, drop the C/C++ sources and object files it was built from.
// better-sqlite3-napi (13) loads its prebuilt addon for this platform from prebuilds/.
const NATIVE = { re2: ['build/Release/re2.node'], 'better-sqlite3': ['build/Release/better_sqlite3.node'], 'better-sqlite3-napi': ['lib/binding.js'] };
for (const [name, keep] of Object.entries(NATIVE)) {
  const root = join('node_modules', name);
  if (!existsSync(root)) continue;
  for (const k of keep) if (!existsSync(join(root, k))) throw new Error(`prune-build-tools: ${name} has no ${k}`);
  for (const dir of ['vendor', 'deps', 'src', 'build/Release/obj', 'build/Release/obj.target', 'build/Release/.deps', 'build/deps'])
    rmSync(join(root, dir), { recursive: true, force: true });
  rmSync(join(root, 'build/Release/sqlite3.a'), { force: true });
  rmSync(join(root, 'build/Release/test_extension.node'), { force: true });
}
for (const scope of readdirSync('node_modules').filter((d) => d.startsWith('@'))) {
  if (readdirSync(join('node_modules', scope)).length === 0) rmSync(join('node_modules', scope), { recursive: true });
}
console.log(`prune-build-tools: removed ${removed} build-only packages, kept ${reached.size}`);
