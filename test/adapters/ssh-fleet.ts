// A fleet of 24 hosts for the progress tests of every adapter: real OpenSSH sshd (sshd-harness.ts) on
// 127.0.0.1, three instances that each answer eight of the host names, with fake nvidia-smi calls
// slowed by different delays so the answers arrive spread over about two seconds, as on a real fleet.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

export const FLEET_SIZE = 24;
/** Seconds each instance's nvidia-smi sleeps per call; a status runs it twice. */
const SMI_DELAYS = ['0.2', '0.6', '1.0'];

export interface SshFleet {
  hosts: SourcedHostsService;
  names: string[];
  close(): Promise<void>;
}

export async function startSshFleet(): Promise<SshFleet> {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-fleet-'));
  const key = makeClientKey(join(root, 'client'));
  const instances: SshdInstance[] = await Promise.all(
    SMI_DELAYS.map((_, i) => startSshd(join(root, `sshd${i}`), key.pub, { skipShellRc: true, data: 'h100' })),
  );
  SMI_DELAYS.forEach((delay, i) => writeFileSync(join(instances[i].dir, 'smi-delay'), delay));
  const names = Array.from({ length: FLEET_SIZE }, (_, i) => `gpu${String(i + 1).padStart(2, '0')}`);
  const config = parseConfig({
    data_dir: join(root, 'data'),
    ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 10_000, exec_timeout_ms: 20_000 },
    hosts: names.map((name, i) => {
      const sshd = instances[i % instances.length];
      return { name, host: '127.0.0.1', port: sshd.port, host_key: sshd.fingerprint };
    }),
  });
  const hosts = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  return {
    hosts,
    names,
    async close() {
      await hosts.close();
      await Promise.all(instances.map((i) => i.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
