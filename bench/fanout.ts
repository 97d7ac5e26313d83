// npm run bench:fanout [-- N]: `status` across N hosts (default 32), each behind a TCP proxy adding
// FANOUT_DELAY_MS (default 25 ms) each way, cold (new connections) and warm (pooled), against OpenSSH's
// own `ssh host nvidia-smi ...` for one host (cold, through the same proxy, BatchMode and strict host
// key checking against a known_hosts file) and for all N with `xargs -P N`. Two kinds of host, one
// table each (FANOUT_SERVERS=ssh2,sshd picks): ssh2 servers in a child process (the issue's "ssh2
// servers behind a proxy": N machines whose server side costs next to nothing, so the link and the
// client are measured) and real OpenSSH sshd instances (every session forks sshd and the login shell on
// this 2-CPU box, so 32 hosts mostly measure that; `sshd-norc` is the same with the account's ~/.bashrc
// left out, which here runs `pyenv init`). Prints times, ratios to one cold ssh, a per-exec
// breakdown of the warm path, and the load average. The warm reference is OpenSSH's multiplexed client:
// one ControlMaster per host (ControlPath/ControlPersist), set up first, then the same status command on
// all N at once through them; warm `status` (the service alone, and `/gpu status` through the console
// chat with its progress updates, as a user sees it) is printed as a ratio to it (goal <= 1.0).
import { execFile, exec, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { loadavg } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { allCommands } from '../commands/index.js';
import { runConsoleChat } from '../src/adapters/console/console-chat.js';
import { parseConfig } from '../src/config.js';
import { CommandRegistry } from '../src/core/registry.js';
import { loadRuleBase } from '../src/diagnose/rule-base.js';
import { MEM_COMMAND, SMI_GPU_ARGS, STATUS_COMMAND } from '../src/hosts/remote-commands.js';
import { SourcedHostsService } from '../src/hosts/service.js';
import { startDelayProxy, type DelayProxy } from '../test/hosts/delay-proxy.js';
import { makeClientKey, SSHD, startSshd, type SshdInstance } from '../test/hosts/sshd-harness.js';
import { withSqliteRegistry } from '../test/storage/sqlite-stores.js';

const N = Number(process.argv[2] ?? process.env.FANOUT_HOSTS ?? 32);
const KINDS = (process.env.FANOUT_SERVERS ?? 'ssh2,sshd,sshd-norc').split(',').filter((k) => ['ssh2', 'sshd', 'sshd-norc'].includes(k));
if (KINDS.some((k) => k.startsWith('sshd')) && !SSHD) {
  console.error('bench:fanout with sshd hosts needs OpenSSH sshd (apt-get install -y openssh-server); FANOUT_SERVERS=ssh2 runs without it');
  process.exit(1);
}
const ROUNDS = Number(process.env.FANOUT_ROUNDS ?? 2);
const DELAY = Number(process.env.FANOUT_DELAY_MS ?? 25);
// Async children: the proxies run in this process's event loop, so nothing here may block it.
const execFileP = promisify(execFile);
const execP = promisify(exec);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-bench-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const key = makeClientKey(join(root, 'client'));

interface Hosts {
  /** Proxy ports, host key fingerprints and known_hosts key lines, one per host. */
  hosts: { port: number; fingerprint: string; keyLine: string }[];
  close(): Promise<void>;
}

async function sshdHosts(skipShellRc: boolean): Promise<Hosts> {
  const instances: SshdInstance[] = [];
  const proxies: DelayProxy[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i += 8) {
    try {
      instances.push(
        ...(await Promise.all(Array.from({ length: Math.min(8, N - i) }, (_, j) => startSshd(join(root, `h${i + j}`), key.pub, { skipShellRc })))),
      );
    } catch (e) {
      console.log(`could only start ${instances.length} of ${N} sshd instances: ${(e as Error).message.split('\n')[0]}`);
      break;
    }
  }
  if (instances.length === 0) throw new Error('no sshd instance started');
  for (const s of instances) proxies.push(await startDelayProxy(s.port, DELAY));
  console.log(
    `${instances.length} sshd instances up in ${Math.round(performance.now() - t0)} ms, each behind a proxy (in this process) adding ${DELAY} ms each way`,
  );
  return {
    hosts: instances.map((s, i) => ({ port: proxies[i].port, fingerprint: s.fingerprint, keyLine: s.publicKeyLine.split(' ').slice(0, 2).join(' ') })),
    async close() {
      await Promise.all(proxies.map((p) => p.close()));
      await Promise.all(instances.map((s) => s.stop()));
    },
  };
}

async function ssh2Hosts(): Promise<Hosts> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'ssh2-hosts.ts'), String(N), String(DELAY), key.keyFile + '.pub'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`ssh2 hosts exited with ${code}`)));
  });
  const { hosts } = JSON.parse(line) as { hosts: Hosts['hosts'] };
  console.log(
    `${hosts.length} ssh2 servers up in ${Math.round(performance.now() - t0)} ms (one child process), each behind a proxy adding ${DELAY} ms each way`,
  );
  return {
    hosts,
    async close() {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

for (const kind of KINDS) {
  console.log(`\n=== ${kind} hosts ===`);
  const world = kind === 'ssh2' ? await ssh2Hosts() : await sshdHosts(kind === 'sshd-norc');
  try {
    await measure(world.hosts);
  } finally {
    await world.close();
  }
}
rmSync(root, { recursive: true, force: true });

async function measure(hosts: Hosts['hosts']): Promise<void> {
  console.log(`load average at start: ${load()}`);
  const H = hosts.length;
  // Hosts are reached at the proxy ports; known_hosts (for OpenSSH) names those ports.
  const kh = join(root, 'known_hosts');
  writeFileSync(kh, hosts.map((h) => `[127.0.0.1]:${h.port} ${h.keyLine}`).join('\n') + '\n');
  const config = parseConfig({
    data_dir: join(root, `data-${hosts[0].port}`),
    ssh: { known_hosts: kh, identity_file: key.keyFile, max_concurrent_connects: 64, connect_timeout_ms: 20000, exec_timeout_ms: 20000 },
    hosts: hosts.map((h, i) => ({ name: `gpu${i}`, host: '127.0.0.1', port: h.port, host_key: h.fingerprint })),
  });
  const user = userInfo().username;
  const sshArgs = (port: number) => [
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${kh}`,
    '-i',
    key.keyFile,
    '-p',
    String(port),
    `${user}@127.0.0.1`,
  ];
  const remote = `nvidia-smi ${SMI_GPU_ARGS.join(' ')}`;

  const colds: number[] = [];
  const warms: number[] = [];
  const consoleWarms: number[] = [];
  const registry = new CommandRegistry(allCommands());
  const rules = await loadRuleBase();
  const breakdown: Record<string, number[]> = { status: [], mem: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
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
    // `/gpu status` typed in the console chat on the same warm pool: the command, its progress updates
    // and the table, timed from the line to the table's first line.
    for (let k = 0; k < 3; k++) consoleWarms.push(await consoleStatus(registry, svc, rules, H));
    // The warm path exec by exec, on one pooled host: the status exec (nvidia-smi x2, free, ps) and
    // the smallest fixed exec (mem) as the floor.
    const first = r[0];
    const target = svc.ssh.target(svc.registry.get(first.name)!);
    for (let k = 0; k < 5; k++) {
      for (const [label, cmd] of [
        ['status', STATUS_COMMAND],
        ['mem', MEM_COMMAND],
      ] as const) {
        const e = await svc.ssh.pool.exec(target, cmd);
        breakdown[label].push(e.ms);
      }
    }
    await svc.close();
  }
  const ones: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t = performance.now();
    await execFileP('ssh', [...sshArgs(hosts[k % H].port), remote]);
    ones.push(performance.now() - t);
  }
  const list = join(root, 'ports');
  writeFileSync(list, hosts.map((h) => h.port).join('\n') + '\n');
  const xargsRuns: number[] = [];
  for (let k = 0; k < 2; k++) {
    const t = performance.now();
    await execP(`xargs -P ${H} -I{} ssh ${sshArgs(0).slice(0, -3).join(' ')} -p {} ${user}@127.0.0.1 '${remote}' < ${list} > /dev/null`);
    xargsRuns.push(performance.now() - t);
  }
  // OpenSSH multiplexing: a master per host (authenticated once, kept by ControlPersist), then the
  // status command on all H through them at once, as a warm pool would.
  const controlPath = (port: number) => join(root, `cm-${port}`);
  const mux = (port: number) => ['-o', `ControlPath=${controlPath(port)}`, '-o', 'ControlMaster=auto', '-o', 'ControlPersist=120'];
  await Promise.all(hosts.map((h) => spawnDone('ssh', [...mux(h.port), ...sshArgs(h.port), 'true'])));
  const muxRuns: number[] = [];
  try {
    for (let k = 0; k < 5; k++) {
      const t = performance.now();
      await Promise.all(hosts.map((h) => execFileP('ssh', [...mux(h.port), ...sshArgs(h.port), STATUS_COMMAND], { maxBuffer: 8 << 20 })));
      muxRuns.push(performance.now() - t);
    }
  } finally {
    await Promise.all(hosts.map((h) => spawnDone('ssh', ['-o', `ControlPath=${controlPath(h.port)}`, '-O', 'exit', ...sshArgs(h.port)])));
  }
  const one = median(ones);
  const muxMs = median(muxRuns);
  const rows = [
    [`status, ${H} hosts, cold (new connections)`, median(colds)],
    [`status, ${H} hosts, warm (pooled)`, median(warms)],
    ['ssh host nvidia-smi, 1 host (OpenSSH, cold)', one],
    [`xargs -P ${H} ssh ..., ${H} hosts`, median(xargsRuns)],
    [`/gpu status in the console, ${H} hosts, warm`, median(consoleWarms)],
    [`OpenSSH multiplexed (ControlMaster), ${H} hosts`, muxMs],
  ] as const;
  console.log('\n' + rows.map(([l, ms]) => `${l.padEnd(48)} ${ms.toFixed(0).padStart(7)} ms   ${(ms / one).toFixed(2)}x one ssh`).join('\n'));
  console.log(
    `\nwarm path, one pooled host, median ms per exec: ${Object.entries(breakdown)
      .filter(([, v]) => v.length)
      .map(([k, v]) => `${k} ${median(v)}`)
      .join(', ')}`,
  );
  console.log(
    `(link: ${DELAY} ms each way = ${2 * DELAY} ms round trip; samples: cold ${colds.map((x) => x.toFixed(0)).join('/')}, warm ${warms.map((x) => x.toFixed(0)).join('/')}, console warm ${consoleWarms.map((x) => x.toFixed(0)).join('/')}, multiplexed ${muxRuns.map((x) => x.toFixed(0)).join('/')}, one ssh ${ones.map((x) => x.toFixed(0)).join('/')})`,
  );
  console.log(`load average at end: ${load()} (${(await import('node:os')).cpus().length} CPUs)`);
  console.log(`\nwarm / one ssh = ${(median(warms) / one).toFixed(2)} (goal <= 0.5)   cold / one ssh = ${(median(colds) / one).toFixed(2)} (goal <= 1.5)`);
  console.log(
    `warm vs OpenSSH multiplexing, ${H} hosts: status ${(median(warms) / muxMs).toFixed(2)}x, /gpu status in the console ${(median(consoleWarms) / muxMs).toFixed(2)}x (goal <= 1.0)`,
  );
}

/** Runs a command to its exit with no pipes (a ControlPersist master forks off and would hold them open). */
function spawnDone(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.slice(-2).join(' ')} exited with ${code}`))));
  });
}

/** Milliseconds from typing `/gpu status` in the console chat to its table (every host answered). */
async function consoleStatus(
  registry: CommandRegistry,
  hosts: SourcedHostsService,
  rules: Awaited<ReturnType<typeof loadRuleBase>>,
  H: number,
): Promise<number> {
  const input = new PassThrough();
  const output = new PassThrough();
  const final = `${H}/${H} ${H === 1 ? 'host' : 'hosts'} answered`;
  let out = '';
  const t = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const answered = new Promise<number>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no "${final}" within 60 s: ${out.slice(-500)}`)), 60_000);
    output.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes(final)) resolve(performance.now() - t);
    });
  }).finally(() => clearTimeout(timer));
  const done = runConsoleChat({
    input,
    output,
    registry,
    context: { platform: 'console', userId: 'bench', isAdmin: true, services: { rules, hosts } },
    interactive: false,
  });
  input.end('/gpu status\n');
  const ms = await answered;
  await done;
  return ms;
}
