// known_hosts @cert-authority against a real sshd serving a CA-signed host certificate (ssh-keygen -s).
// OpenSSH's client accepts the host through the CA line (so the setup is right); gpu-doctor cannot
// check host certificates (ssh2 negotiates no *-cert-v01 host key algorithm, so the host shows only
// its plain key) and refuses with a line that says exactly that and how to go on; a pin then works.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { SMI_GPU_ARGS } from '../../src/hosts/remote-commands.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const execFileP = promisify(execFile);

describeWithSshd('@cert-authority host certificates', 'test/hosts/cert-authority.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-ca-'));
  let host: SshdInstance;
  let key: { keyFile: string; pub: string };
  let svc: SourcedHostsService;
  const caLine = (ca: string, port: number) =>
    `@cert-authority [127.0.0.1]:${port} ${readFileSync(ca + '.pub', 'utf8')
      .split(' ')
      .slice(0, 2)
      .join(' ')}\n`;
  const openssh = (knownHosts: string) =>
    execFileP(
      'ssh',
      [
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        `UserKnownHostsFile=${knownHosts}`,
        '-o',
        'GlobalKnownHostsFile=/dev/null',
        '-i',
        key.keyFile,
        '-p',
        String(host.port),
        `${userInfo().username}@127.0.0.1`,
        'nvidia-smi',
        ...SMI_GPU_ARGS,
      ],
      { timeout: 15_000 },
    );

  beforeAll(async () => {
    key = makeClientKey(join(root, 'client'));
    for (const ca of ['ca', 'other-ca']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(root, ca), '-C', ca]);
    host = await startSshd(join(root, 'host'), key.pub, { skipShellRc: true, hostCertificateCa: join(root, 'ca') });
    writeFileSync(join(root, 'known_hosts'), caLine(join(root, 'ca'), host.port));
    writeFileSync(join(root, 'known_hosts.other'), caLine(join(root, 'other-ca'), host.port));
    svc = new SourcedHostsService(
      withSqliteRegistry({
        config: parseConfig({
          data_dir: join(root, 'data'),
          ssh: { known_hosts: join(root, 'known_hosts'), identity_file: key.keyFile, connect_timeout_ms: 5000, exec_timeout_ms: 5000 },
          hosts: [
            { name: 'certified', host: '127.0.0.1', port: host.port },
            { name: 'pinned', host: '127.0.0.1', port: host.port, host_key: host.fingerprint },
          ],
        }),
        baseDir: root,
        agent: null,
      }),
    );
  });

  afterAll(async () => {
    await svc?.close();
    await host?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('OpenSSH accepts the host through the CA line, and refuses it under another CA (the setup is real)', async () => {
    const { stdout } = await openssh(join(root, 'known_hosts'));
    expect(stdout).toContain('NVIDIA H200');
    await expect(openssh(join(root, 'known_hosts.other'))).rejects.toThrow(/Host key verification failed/);
  });

  it('gpu-doctor refuses a host known only through @cert-authority, saying why and how to go on; a pin works', async () => {
    const [certified, pinned] = await svc.status(['certified', 'pinned']);
    expect(certified.ok).toBe(false);
    const error = certified.ok ? '' : certified.error;
    expect(error).toContain(`host key unknown for certified (127.0.0.1:${host.port}): ${host.fingerprint}`);
    expect(error).toContain('known_hosts has only a @cert-authority for it and ssh2 cannot check host certificates (no *-cert-v01 algorithms)');
    expect(error).toMatch(/then `hosts trust certified`$/);
    expect(pinned.ok && pinned.gpus.length).toBe(8);
  });
});
