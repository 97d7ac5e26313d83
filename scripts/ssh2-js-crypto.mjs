#!/usr/bin/env node
// Run by `prepare` after `npm ci`: removes ssh2's optional native crypto binding when it was compiled
// against Node headers whose node::ObjectWrap registers environment cleanup hooks (Node 24.19+). Its
// cipher objects derive from that class, and the process aborts (`Assertion failed: (env) != nullptr` in
// node::RemoveEnvironmentCleanupHook) when a garbage collection outside any JavaScript context frees one,
// as it may after any SSH connection closes (nodejs/node#65446, mscdex/ssh2#1511). Without the binding
// ssh2 uses its own implementations over node:crypto, as it does wherever the binding failed to build.
// On older headers (Node 20, 22) the binding stays.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const crypto = join('node_modules', 'ssh2', 'lib', 'protocol', 'crypto', 'build');
const binding = join(crypto, 'Release', 'sshcrypto.node');
if (existsSync(binding)) {
  // The headers it was built against: node-gyp records their folder in config.gypi.
  const nodedir = /"nodedir":\s*"([^"]+)"/.exec(existsSync(join(crypto, 'config.gypi')) ? readFileSync(join(crypto, 'config.gypi'), 'utf8') : '')?.[1];
  const header = nodedir ? join(nodedir, 'include', 'node', 'node_object_wrap.h') : '';
  const [major, minor] = process.versions.node.split('.').map(Number);
  const hooked =
    header && existsSync(header) ? readFileSync(header, 'utf8').includes('AddEnvironmentCleanupHook') : major > 24 || (major === 24 && minor >= 19);
  if (hooked) {
    rmSync(binding);
    console.log(`ssh2-js-crypto: removed ssh2's native crypto binding (built against ${nodedir ?? `Node ${process.version}`} headers); ssh2 uses node:crypto`);
  }
}
