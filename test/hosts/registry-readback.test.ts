// Registry rows are read back from a database that another replica, or anyone with access to it, may have
// written (issue 22 item 14): a host whose stored address, port, user, identity file or trusted key is not one
// `hosts add` / `hosts trust` could have written is skipped, and the bot's log names it; a bad stored pin never
// leaves the host reachable unpinned. Through `gpu-doctor hosts list --json` (the binary, a config file, the
// registry's SQLite database changed behind its back).
import Database from '../../src/storage/sqlite-driver.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { HostRegistry } from '../../src/storage/sqlite/registry.js';

const FP = `SHA256:${'A'.repeat(43)}`;

function hostsList(config: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((done, fail) =>
    execFile(
      resolve(import.meta.dirname, '../../bin/gpu-doctor'),
      ['hosts', 'list', '--json', '--config', config],
      { timeout: 60_000 },
      (err, stdout, stderr) => (err && !stdout ? fail(new Error(err.message)) : done({ stdout, stderr })),
    ),
  );
}

it('hostile registry rows and trusted keys are skipped and named; good ones are listed as stored', async () => {
  const root = mkdtempSync(join(tmpdir(), 'gd-registry-readback-'));
  const data = join(root, 'data');
  const reg = new HostRegistry(data, []);
  for (const name of ['good', 'badhost', 'badport', 'baduser', 'badkeyfile', 'badpin', 'pinned'])
    reg.add({ name, host: `${name}.example`, port: 22, user: 'ml' });
  reg.trust('pinned', FP);
  reg.close();
  const db = new Database(join(data, 'gpu-doctor.sqlite'));
  db.prepare("UPDATE hosts SET host = 'x; rm -rf ~' WHERE name = 'badhost'").run();
  db.prepare("UPDATE hosts SET port = 99999 WHERE name = 'badport'").run();
  db.prepare("UPDATE hosts SET user = '$(id)' WHERE name = 'baduser'").run();
  db.prepare("UPDATE hosts SET identity_file = 'keys/id\nProxyCommand x' WHERE name = 'badkeyfile'").run();
  db.prepare("INSERT INTO host_keys (name, fingerprint, trusted_at) VALUES ('badpin', 'SHA256:nope; echo', 'x'), ('cfg', '../etc', 'x')").run();
  db.prepare("INSERT INTO hosts (name, host, port, user, identity_file, added_at) VALUES ('../../etc', 'h.example', 22, 'ml', NULL, 'x')").run();
  db.close();
  const config = join(root, 'gpu-doctor.yaml');
  writeFileSync(config, `data_dir: ${data}\nhosts:\n  - { name: cfg, host: cfg.example, user: ml }\n  - { name: cfg2, host: cfg2.example, user: ml }\n`);

  const { stdout, stderr } = await hostsList(config);
  const names = (JSON.parse(stdout) as { hosts: { name: string; hostKey?: string }[] }).hosts.map((h) => h.name).sort();
  expect(names).toEqual(['cfg2', 'good', 'pinned']);
  for (const [name, what] of [
    ['badhost', 'address'],
    ['badport', 'port'],
    ['baduser', 'user'],
    ['badkeyfile', 'identity file'],
    ['badpin', 'host key'],
    ['cfg', 'host key'],
    ['../../etc', 'name'],
  ])
    expect(stderr).toContain(`registry: host ${JSON.stringify(name)} skipped: its stored ${what} is not one`);
  expect(stdout).not.toContain('rm -rf');
  expect(stdout).not.toContain('$(id)');
});
