// Attack 11: the data directory holds the audit trail, trusted host keys and process command lines.
// It must be created 0700 and its SQLite files 0600 whatever the umask, and an existing wider
// directory is narrowed.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AuditStore } from '../src/storage/sqlite/audit.js';
import { WatchStore } from '../src/storage/sqlite/watch.js';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../bin/gpu-doctor');
const mode = (p: string) => statSync(p).mode & 0o777;

function expectPrivate(dir: string) {
  expect(mode(dir).toString(8)).toBe('700');
  const files = readdirSync(dir).filter((f) => f.includes('.sqlite'));
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) expect(`${f} ${mode(join(dir, f)).toString(8)}`).toBe(`${f} 600`);
}

describe('state files are private to the bot user', () => {
  it('the host registry made by `gpu-doctor hosts list` (umask 022): data/ 0700, sqlite files 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-perm-'));
    const data = join(root, 'data');
    const config = join(root, 'gpu-doctor.yaml');
    writeFileSync(config, `data_dir: ${data}\nhosts: []\n`);
    // `umask 022` through sh: execFile passes no shell, so this is the test's own fixed command.
    await run('sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, BIN, 'hosts', 'list', '--config', config]);
    expectPrivate(data);
  });

  it('an existing world-readable data directory and database are narrowed; audit and watch stores too', () => {
    const data = join(mkdtempSync(join(tmpdir(), 'gd-perm-')), 'data');
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    writeFileSync(join(data, 'audit.sqlite'), '', { mode: 0o644 });
    chmodSync(join(data, 'audit.sqlite'), 0o644);
    const audit = AuditStore.inDataDir(data);
    audit.record({ ts: 1, platform: 'slack', user: 'U1', channel: null, command: 'status', outcome: 'ok', ms: 1 });
    const watch = WatchStore.inDataDir(data);
    audit.close();
    watch.close();
    expectPrivate(data);
    expect(readdirSync(data)).toEqual(expect.arrayContaining(['audit.sqlite', 'watch.sqlite']));
  });
});
