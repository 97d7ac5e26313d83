// npm run bench:ssh: how many hosts one replica's leak-watch sampler reads within its interval. The real
// sampler (src/watch/sampleOnce through SourcedHostsService.statusInBackground, the real SSH pool with the
// config's default ssh settings, samples written to a real WatchStore file) runs over N host entries
// (BENCH_SSH_HOSTS, default 25,50,100,200) in a child process of its own, so its CPU time and RSS are
// the bot's. The hosts are the tests' real OpenSSH sshd fleet (test/hosts/sshd-harness.ts: fake
// nvidia-smi, ps and free replaying real outputs of an 8x H200 host); BENCH_SSHD (default 8) sshd
// instances serve all entries, host i on instance i mod BENCH_SSHD, each entry its own connection (the
// pool keys connections by host name, so N entries are N connections and N forked sshd sessions).
// Every instance sits behind a TCP proxy (test/hosts/delay-proxy.ts, in the parent process) holding
// each chunk BENCH_DELAY_MS (default 10) each way: a 20 ms round trip, as to machines in another room
// or rack row, not localhost.
//
// Per N: one cold round (new connections) and BENCH_ROUNDS (default 3) warm rounds (pooled, the
// steady state), wall time and the bot's CPU time per round; and OpenSSH's client as the reference:
// `ssh -o BatchMode=yes ... HOST '<the same status command>'` for every host through the same proxies,
// run by `xargs -P 16` (the pool's max_concurrent_connects), a new connection each, its wall time and
// its ssh clients' CPU time (/usr/bin/time). The capacity is read off the default sample interval
// (config defaults, watch.sample_interval_s): hosts whose warm round the bot's one event-loop thread
// can do in the interval (CPU bound), and the wall-clock rate measured here. On this 2-CPU box the
// sshd sessions, the fake nvidia-smi scripts and the proxies share the CPUs with the bot; on a real
// fleet that work runs on the GPU hosts, so the wall figures here are pessimistic. Never asserts a time.
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../src/config.js';
import { CHANNEL_WATCHDOG, SECTION_MARK, STATUS_COMMAND } from '../src/hosts/remote-commands.js';
import { startDelayProxy, type DelayProxy } from '../test/hosts/delay-proxy.js';
import { makeClientKey, SSHD, startSshd, type SshdInstance } from '../test/hosts/sshd-harness.js';
import { withSqliteRegistry } from '../test/storage/sqlite-stores.js';

const SIZES = (process.env.BENCH_SSH_HOSTS ?? '25,50,100,200')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const INSTANCES = Number(process.env.BENCH_SSHD ?? 8);
const DELAY = Number(process.env.BENCH_DELAY_MS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The middle value; of an even count, the mean of the two middle ones (of 2 runs: their mean, not the slower). */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const DEFAULTS = parseConfig({});
const INTERVAL_S = DEFAULTS.watch.sample_interval_s;
const PARALLEL = DEFAULTS.ssh.max_concurrent_connects;

interface ChildJob {
  root: string;
  keyFile: string;
  knownHosts: string;
  hosts: { name: string; port: number; fingerprint: string }[];
  rounds: number;
}
interface RoundResult {
  wallMs: number;
  cpuMs: number;
  ok: number;
  failed: number;
  samples: number;
  firstError?: string;
}
interface ChildResult {
  rounds: RoundResult[];
  maxRssMiB: number;
}

async function main(): Promise<void> {
  if (!SSHD) {
    console.error('bench:ssh needs OpenSSH sshd (apt-get install -y openssh-server)');
    process.exit(1);
  }
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-bench-ssh-'));
  const instances: SshdInstance[] = [];
  const proxies: DelayProxy[] = [];
  try {
    const key = makeClientKey(join(root, 'client'));
    for (let i = 0; i < INSTANCES; i++) instances.push(await startSshd(join(root, `sshd${i}`), key.pub, { skipShellRc: true, data: 'h200' }));
    for (const s of instances) proxies.push(await startDelayProxy(s.port, DELAY));
    const knownHosts = join(root, 'known_hosts');
    writeFileSync(knownHosts, instances.map((s, i) => `[127.0.0.1]:${proxies[i].port} ${s.publicKeyLine.split(' ').slice(0, 2).join(' ')}`).join('\n') + '\n');
    // OpenSSH's client, one host per call: the bot's own status command, so both ask the hosts the same
    // (less its channel watchdog, which ends the script when stdin closes: xargs gives ssh /dev/null).
    // A call counts only with the whole answer (the last section's marker) in its output.
    const user = userInfo().username;
    const cmdFile = join(root, 'status-command.txt');
    writeFileSync(cmdFile, STATUS_COMMAND.replace(CHANNEL_WATCHDOG, ''));
    const refScript = join(root, 'ref.sh');
    writeFileSync(
      refScript,
      [
        '#!/bin/sh',
        `out=$(ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${knownHosts} -i ${key.keyFile} -p "$1" ${user}@127.0.0.1 "$(cat ${cmdFile})") || exit 1`,
        `case "$out" in *"${SECTION_MARK} proc "*) exit 0 ;; esac`,
        'echo "incomplete answer through port $1" >&2; exit 1',
        '',
      ].join('\n'),
    );
    chmodSync(refScript, 0o755);
    console.log(
      `${INSTANCES} OpenSSH sshd instances (${SSHD}; fake nvidia-smi/ps/free replaying an 8x H200 host's real outputs), each behind a proxy adding ${DELAY} ms each way (${2 * DELAY} ms round trip)`,
    );
    console.log(
      `config defaults: watch.sample_interval_s ${INTERVAL_S}, ssh.max_concurrent_connects ${PARALLEL}, connect_timeout_ms ${DEFAULTS.ssh.connect_timeout_ms}, exec_timeout_ms ${DEFAULTS.ssh.exec_timeout_ms}`,
    );
    const table: string[][] = [];
    for (const n of SIZES) {
      const hosts = Array.from({ length: n }, (_, i) => ({
        name: `gpu${i}`,
        port: proxies[i % INSTANCES].port,
        fingerprint: instances[i % INSTANCES].fingerprint,
      }));
      const jobFile = join(root, `job-${n}.json`);
      const job: ChildJob = { root: join(root, `bot-${n}`), keyFile: key.keyFile, knownHosts, hosts, rounds: ROUNDS };
      writeFileSync(jobFile, JSON.stringify(job));
      const load0 = loadavg()[0];
      const r = await runChild(jobFile);
      // The reference, right after, on the same fleet (the bot's connections are closed by then).
      const ports = join(root, `ports-${n}`);
      writeFileSync(ports, hosts.map((h) => h.port).join('\n') + '\n');
      const refs: { wallMs: number; cpuMs: number }[] = [];
      for (let k = 0; k < 2; k++) refs.push(await openssh(refScript, ports, PARALLEL));
      const [cold, ...warm] = r.rounds;
      const failed = r.rounds.reduce((a, x) => a + x.failed, 0);
      const warmWall = median(warm.map((x) => x.wallMs));
      const warmCpu = median(warm.map((x) => x.cpuMs));
      const refWall = median(refs.map((x) => x.wallMs));
      const refCpu = median(refs.map((x) => x.cpuMs));
      table.push([
        String(n),
        ms(cold.wallMs),
        ms(cold.cpuMs),
        ms(warmWall),
        ms(warmCpu),
        (warmCpu / n).toFixed(1),
        ms(refWall),
        ms(refCpu),
        (warmWall / refWall).toFixed(2) + 'x',
        (cold.wallMs / refWall).toFixed(2) + 'x',
        String(Math.floor((INTERVAL_S * 1000) / (warmCpu / n))),
        String(Math.floor((n * INTERVAL_S * 1000) / warmWall)),
        r.maxRssMiB.toFixed(0),
        String(Math.min(...r.rounds.map((x) => x.ok))),
        `${failed}${cold.firstError ? ` (${cold.firstError.slice(0, 60)})` : ''}`,
        `${load0.toFixed(1)}`,
      ]);
      console.log(
        `N=${n}: cold ${ms(cold.wallMs)} ms, warm ${warm.map((x) => ms(x.wallMs)).join('/')} ms (bot CPU ${warm.map((x) => ms(x.cpuMs)).join('/')} ms, ${warm[0]?.samples ?? 0} samples a round), ` +
          `OpenSSH ${refs.map((x) => ms(x.wallMs)).join('/')} ms (client CPU ${refs.map((x) => ms(x.cpuMs)).join('/')} ms)`,
      );
    }
    const head = [
      'N',
      'cold ms',
      'cold CPU',
      'warm ms',
      'warm CPU',
      'CPU/host',
      'ssh ms',
      'ssh CPU',
      'warm/ssh',
      'cold/ssh',
      'fit (CPU)',
      'fit (wall)',
      'RSS MiB',
      'sampled',
      'failed',
      'load',
    ];
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
    console.log(`\nsampling rounds (medians of ${ROUNDS} warm rounds; OpenSSH: median of 2 runs of xargs -P ${PARALLEL}, a new connection per host):`);
    for (const row of [head, ...table]) console.log(row.map((c, i) => (i === 14 ? c : c.padStart(widths[i]))).join('  '));
    console.log(
      `\nfit (CPU): hosts whose warm sampling the bot's CPU time allows in one ${INTERVAL_S} s interval on one core (the event loop is one thread): ${INTERVAL_S} s / (warm CPU / N).` +
        `\nfit (wall): N x ${INTERVAL_S} s / warm round, the rate measured here with every sshd, shell and fake nvidia-smi on the same ${cpus().length} CPUs as the bot (pessimistic).` +
        `\nCPU columns are ms of CPU time (user+sys): the bot's process, and the ssh clients' (not sshd's). Shared machine, load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}: noisy figures.`,
    );
  } finally {
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(instances.map((s) => s.stop()));
    rmSync(root, { recursive: true, force: true });
  }
}

const ms = (x: number) => x.toFixed(0);

function runChild(jobFile: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', jobFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    c.stdout.on('data', (d: Buffer) => (s += d.toString()));
    c.once('exit', (code) => (code === 0 ? resolve(JSON.parse(s.trim().split('\n').pop()!) as ChildResult) : reject(new Error(`child exited with ${code}`))));
  });
}

async function openssh(script: string, ports: string, parallel: number): Promise<{ wallMs: number; cpuMs: number }> {
  const t = performance.now();
  // /usr/bin/time reports xargs' own and its waited-for children's (the ssh clients') CPU time.
  const { stderr } = await promisify(execFile)('sh', ['-c', `/usr/bin/time -f 'TIME %U %S' xargs -P ${parallel} -n 1 ${script} < ${ports}`], {
    maxBuffer: 16 << 20,
  });
  const wallMs = performance.now() - t;
  const m = /TIME ([\d.]+) ([\d.]+)/.exec(stderr);
  if (!m) throw new Error(`no timing from /usr/bin/time: ${stderr.slice(-300)}`);
  return { wallMs, cpuMs: (Number(m[1]) + Number(m[2])) * 1000 };
}

// ---- the child: the bot's sampler ----

async function child(jobFile: string): Promise<void> {
  const job = JSON.parse(readFileSync(jobFile, 'utf8')) as ChildJob;
  const [{ SourcedHostsService }, { sampleOnce }, { WatchStore }] = await Promise.all([
    import('../src/hosts/service.js'),
    import('../src/watch/sampler.js'),
    import('../src/storage/sqlite/watch.js'),
  ]);
  const config = parseConfig({
    data_dir: join(job.root, 'data'),
    ssh: { identity_file: job.keyFile, known_hosts: job.knownHosts },
    hosts: job.hosts.map((h) => ({ name: h.name, host: '127.0.0.1', port: h.port, host_key: h.fingerprint })),
    watch: { enabled: true },
  });
  const svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: job.root, agent: null }));
  const store = WatchStore.inDataDir(join(job.root, 'data'));
  const rounds: RoundResult[] = [];
  try {
    for (let k = 0; k <= job.rounds; k++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await sampleOnce(svc, store, Date.now());
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const bad = r.status.find((s) => !s.ok);
      rounds.push({
        wallMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        ok: r.ok,
        failed: r.failed,
        samples: r.samples,
        ...(bad && !bad.ok ? { firstError: bad.error } : {}),
      });
    }
  } finally {
    await svc.close();
    store.close();
  }
  process.stdout.write(JSON.stringify({ rounds, maxRssMiB: process.resourceUsage().maxRSS / 1024 } satisfies ChildResult) + '\n');
}

// Last, so every const above is initialised.
if (process.argv[2] === '--child') await child(process.argv[3]);
else await main();
