// Issue 22 item 16: `knowledge new ID --from /dev/zero` read 3 GB before its 1 MB check, and a FIFO made it
// wait for a writer for ever. Files named on the command line are read only when they are regular files
// (checked on the descriptor opened without blocking) and no further than the cap: /dev/zero and a FIFO
// are answered with one line and exit status 2, for `knowledge new`, `knowledge check`, `diagnose` and
// `digest` alike. Through the CLI (bin/gpu-doctor); every run has a deadline that ends a hung one.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const LOG = resolve(import.meta.dirname, '../fixtures/eval-dev/003-cuda_oom.log');
const work = mkdtempSync(join(tmpdir(), 'gd-file-kinds-'));
const FIFO = join(work, 'fifo.log');
execFileSync('mkfifo', [FIFO]);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The CLI's exit status and output; a run still going after 60 s is killed (and fails the test). */
async function cli(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string; killed: boolean }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { timeout: 60_000, maxBuffer: 1 << 20 });
    return { code: 0, stdout, stderr, killed: false };
  } catch (e) {
    const err = e as { code: number | string; stdout: string; stderr: string; killed?: boolean };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr, killed: err.killed === true };
  }
}

describe('files that are not regular files are refused in one line', () => {
  it.each([
    ['/dev/zero', '/dev/zero'],
    ['a FIFO', FIFO],
  ])('knowledge new --from %s: exit 2, one line, no rule folder', { timeout: 90_000 }, async (_, from) => {
    const line = `not a regular file: ${from}`;
    const dir = join(work, `kb-${from === FIFO ? 'fifo' : 'zero'}`);
    const r = await cli(['knowledge', 'new', 'my-rule', '--from', from, '--dir', dir]);
    expect(r.killed).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`gpu-doctor: ${line}\n`);
    expect(r.stdout).toBe('');
    expect(existsSync(join(dir, 'my-rule'))).toBe(false);
  });

  it('knowledge new still reads a regular log, and refuses one over 1 MB without reading past it', { timeout: 90_000 }, async () => {
    const dir = join(work, 'kb-ok');
    const ok = await cli(['knowledge', 'new', 'yolo-card', '--from', LOG, '--dir', dir]);
    expect(ok.code).toBe(0);
    expect(readFileSync(join(dir, 'yolo-card/match/003-cuda_oom.log'), 'utf8')).toBe(readFileSync(LOG, 'utf8'));
    const big = join(work, 'big.log');
    writeFileSync(big, 'x'.repeat((1 << 20) + 1));
    const over = await cli(['knowledge', 'new', 'big-one', '--from', big, '--dir', dir]);
    expect(over.code).toBe(2);
    expect(over.stderr).toBe('gpu-doctor: big.log is over 1 MB: cut it to the lines that show the failure\n');
  });

  it("knowledge check names a FIFO among a rule's examples as a problem instead of waiting on it", { timeout: 90_000 }, async () => {
    const dir = join(work, 'kb-check');
    expect((await cli(['knowledge', 'new', 'yolo-card', '--from', LOG, '--dir', dir])).code).toBe(0);
    mkdirSync(join(dir, 'yolo-card', 'no-match'), { recursive: true });
    execFileSync('mkfifo', [join(dir, 'yolo-card', 'no-match', 'pipe.log')]);
    const r = await cli(['knowledge', 'check', '--dir', dir]);
    expect(r.killed).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`yolo-card: no-match/pipe.log: not a regular file: ${join(dir, 'yolo-card', 'no-match', 'pipe.log')}`);
  });

  it.each([
    ['diagnose', '/dev/zero', '/dev/zero'],
    ['diagnose', 'a FIFO', FIFO],
    ['digest --samples', '/dev/zero', '/dev/zero'],
    ['digest --samples', 'a FIFO', FIFO],
  ])('%s %s: exit 2, one line', { timeout: 90_000 }, async (command, _, file) => {
    const r = await cli([...command.split(' '), file]);
    expect(r.killed).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`gpu-doctor: not a regular file: ${file}\n`);
  });
});
