// npm run bench:fanout [-- N]: `status` across N real sshd hosts (default 32), cold (new connections)
// and warm (pooled), against OpenSSH's own `ssh host nvidia-smi ...` for one host and for all N with
// `xargs -P N`. Prints the times and the ratios to one cold ssh.
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/core/config.js';
import { SMI_GPU_ARGS } from '../src/hosts/remote-commands.js';
import { SshHostsService } from '../src/hosts/service.js';
import { makeClientKey, SSHD, startSshd, type SshdInstance } from '../test/hosts/sshd-harness.js';

const N = Number(process.argv[2] ?? process.env.FANOUT_HOSTS ?? 32);
if (!SSHD) {
  console.error('bench:fanout needs OpenSSH sshd (apt-get install -y openssh-server)');
  process.exit(1);
}
const ROUNDS = Number(process.env.FANOUT_ROUNDS ?? 2);
const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-bench-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const key = makeClientKey(join(root, 'client'));
const instances: SshdInstance[] = [];
try {
  const t0 = performance.now();
  for (let i = 0; i < N; i += 8) instances.push(...(await Promise.all(Array.from({ length: Math.min(8, N - i) }, (_, j) => startSshd(join(root, `h${i + j}`), key.pub)))));
  console.log(`${N} sshd instances up in ${Math.round(performance.now() - t0)} ms`);
  const kh = join(root, 'known_hosts');
  writeFileSync(kh, instances.map((s) => `[127.0.0.1]:${s.port} ${s.publicKeyLine.split(' ').slice(0, 2).join(' ')}`).join('\n') + '\n');
  const config = parseConfig({
    data_dir: join(root, 'data'),
    ssh: { known_hosts: kh, identity_file: key.keyFile, max_concurrent_connects: 64, connect_timeout_ms: 20000, exec_timeout_ms: 20000 },
    hosts: instances.map((s, i) => ({ name: `gpu${i}`, host: '127.0.0.1', port: s.port, host_key: s.fingerprint })),
  });
  const user = userInfo().username;
  const sshArgs = (port: number) => ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${kh}`, '-i', key.keyFile, '-p', String(port), `${user}@127.0.0.1`];
  const remote = `nvidia-smi ${SMI_GPU_ARGS.join(' ')}`;

  const colds: number[] = [];
  const warms: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const svc = new SshHostsService({ config, baseDir: root, agent: null });
    let t = performance.now();
    const r = await svc.status([]);
    colds.push(performance.now() - t);
    const bad = r.filter((x) => !x.ok);
    if (bad.length) throw new Error(`cold: ${bad.length} host(s) failed: ${JSON.stringify(bad[0])}`);
    for (let k = 0; k < 3; k++) {
      t = performance.now();
      const w = await svc.status([]);
      warms.push(performance.now() - t);
      if (w.some((x) => !x.ok)) throw new Error('warm: a host failed');
    }
    await svc.close();
  }
  const ones: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t = performance.now();
    execFileSync('ssh', [...sshArgs(instances[k % N].port), remote], { stdio: ['ignore', 'pipe', 'pipe'] });
    ones.push(performance.now() - t);
  }
  const list = join(root, 'ports');
  writeFileSync(list, instances.map((s) => s.port).join('\n') + '\n');
  const xargsRuns: number[] = [];
  for (let k = 0; k < 2; k++) {
    const t = performance.now();
    execSync(`xargs -P ${N} -I{} ssh ${sshArgs(0).slice(0, -3).join(' ')} -p {} ${user}@127.0.0.1 '${remote}' < ${list} > /dev/null`, { stdio: ['ignore', 'ignore', 'pipe'] });
    xargsRuns.push(performance.now() - t);
  }
  const one = median(ones);
  const rows = [
    [`status, ${N} hosts, cold (new connections)`, median(colds)],
    [`status, ${N} hosts, warm (pooled)`, median(warms)],
    ['ssh host nvidia-smi, 1 host (OpenSSH, cold)', one],
    [`xargs -P ${N} ssh ..., ${N} hosts`, median(xargsRuns)],
  ] as const;
  console.log('\n' + rows.map(([l, ms]) => `${l.padEnd(48)} ${ms.toFixed(0).padStart(7)} ms   ${(ms / one).toFixed(2)}x one ssh`).join('\n'));
  console.log(`\nwarm / one ssh = ${(median(warms) / one).toFixed(2)} (goal <= 0.5)   cold / one ssh = ${(median(colds) / one).toFixed(2)} (goal <= 1.5)`);
} finally {
  await Promise.all(instances.map((s) => s.stop()));
  rmSync(root, { recursive: true, force: true });
}
