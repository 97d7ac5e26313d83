// SSH connections' ciphers freed by garbage collections that run outside JavaScript do not end the
// process: ssh2's native crypto binding, built against Node 24.19+ headers, aborted there (`Assertion
// failed: (env) != nullptr`, SIGABRT) after connections closed; `prepare` (scripts/ssh2-js-crypto.mjs)
// removes that binding on such headers, and ssh2 uses node:crypto.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('ssh2 ciphers', () => {
  it('ciphers left to the garbage collector while 32 MB of piped input is read: the process finishes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/hosts/ssh-ciphers-left-to-gc.ts'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    child.stdin.on('error', () => {}); // a child that aborted closes the pipe under the writes
    const block = Buffer.alloc(64 * 1024);
    let ended = false;
    void exited.then(() => (ended = true));
    for (let i = 0; i < 512 && !ended; i++) if (!child.stdin.write(block)) await Promise.race([new Promise((r) => child.stdin.once('drain', r)), exited]);
    child.stdin.end();
    const { code, signal } = await exited;
    expect({ code, signal, err: err.includes('Assertion failed') ? err : '' }).toEqual({ code: 0, signal: null, err: '' });
    expect(out).toMatch(/^read \d+ chunks, \d+ ciphers/m);
  }, 120_000);
});
