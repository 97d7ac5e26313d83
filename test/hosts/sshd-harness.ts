// Real OpenSSH sshd instances on 127.0.0.1 random ports, each with its own host key, one authorised
// client key, a ForceCommand wrapper that logs $SSH_ORIGINAL_COMMAND to an audit log, and fake
// nvidia-smi / ps scripts answering the bot's exact queries from the real outputs in test/fixtures/readings.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { setPriority } from 'node:os';
import { join, resolve } from 'node:path';
import { parseSmiCsv } from '../../src/readings/nvidia-smi-csv.js';
import { parseSmiTable } from '../../src/readings/nvidia-smi-table.js';
import { SMI_HEALTH_FIELD_SETS } from '../../src/readings/nvidia-smi-health.js';

export const SSHD = ['/usr/sbin/sshd', '/usr/local/sbin/sshd'].find((p) => existsSync(p)) ?? null;
export const fixturesDir = resolve(import.meta.dirname, '../fixtures/readings');

export type SmiMode = 'ok' | 'missing' | 'hang' | 'driver';
/**
 * How the host answers the health query: its own values (default); the H100 row with a pending row remap
 * (flagged); an older driver that knows only the oldest field list; or one that knows none of them. A refused
 * list is answered with nvidia-smi's message for an unknown field (`Field "compute_cap" is not a valid field
 * to query.`, as quoted in huggingface/candle#733), naming the list's newest field, exit 2.
 */
export type HealthMode = 'ok' | 'remap-pending' | 'old-driver' | 'no-fields';

export interface SshdInstance {
  port: number;
  dir: string;
  fingerprint: string;
  publicKeyLine: string;
  auditLog: string;
  /** One line per session: the pid of the shell that runs the command (the wrapper execs into it). */
  sessionPids: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

/** The real H200 MIG capture (nvidia_gpu_exporter's collect.sh, MIT; see ../fixtures/readings-peers/README.md). */
export const H200_MIG_CAPTURE = resolve(fixturesDir, '../readings-peers/nvidia_gpu_exporter/linux-x86_64__nvidia-h200-mig__590.48.01.txt');

/** One section of an nvidia_gpu_exporter capture, by its title line (`load :: nvidia-smi (default table)`), as printed. */
export function captureSection(file: string, title: string): string {
  const lines = readFileSync(file, 'utf8').split('\n');
  const rule = (l: string | undefined) => l !== undefined && /^#{20,}$/.test(l);
  const at = lines.indexOf(`# ${title}`);
  if (at < 0) throw new Error(`no section ${title}`);
  let i = at;
  while (!rule(lines[i])) i++;
  const out: string[] = [];
  for (i++; i < lines.length && !rule(lines[i]); i++) out.push(lines[i]);
  while (out.length && out[out.length - 1].trim() === '') out.pop();
  return out.join('\n') + '\n';
}

/** Values of a `--format=csv` capture's first row by field name, units cut as nounits prints them. */
function csvRowByName(csv: string, names: readonly string[]): string {
  const [header, row] = csv.split('\n');
  const fields = header.split(',').map((h) => h.trim().replace(/ \[.*\]$/, ''));
  const cells = row.split(',').map((c) => c.trim().replace(/ (W|MiB|%)$/, ''));
  return names.map((n) => cells[fields.indexOf(n.replace('clocks_throttle_reasons.', 'clocks_event_reasons.'))]).join(', ');
}

/**
 * Host data generated from the real fixtures: 8x H200 (table + compute-apps), 1x H100 (MIG apps), or the
 * H200 with five MIG devices under load (its query-gpu, compute-apps, `-L` and default table sections).
 */
/** The real rocm-smi outputs (../fixtures/rocm-smi/README.md says where each comes from). */
export const ROCM_FIXTURES = resolve(fixturesDir, '../rocm-smi');

export function fixtureData(kind: 'h200' | 'h100' | 'h200-mig' | 'rocm'): {
  gpuCsv: string;
  appsCsv: string;
  psTxt: string;
  healthCsv: string;
  listTxt?: string;
  tableTxt?: string;
  rocmJson?: string;
  rocmPids?: string;
  rocmTable?: string;
} {
  const f = (p: string) => readFileSync(join(fixturesDir, p), 'utf8');
  if (kind === 'rocm') {
    // A host with no nvidia-smi and one AMD card: the RX 7900 XT's --json reading, a --showpids table of four
    // gmx_mpi processes and the default concise table of a 2 x RX 7900 XTX machine, whose device 0 row gives card 0
    // its temperature and power (three real outputs from three machines, each answering its own exact command). The
    // ps columns are synthetic: 10 minutes, 50.0 % CPU, 512 MiB resident, user erin.
    const rocmPids = readFileSync(join(ROCM_FIXTURES, 'rocm-smi-lib-166-showpids-unknown-2024.txt'), 'utf8');
    const pids = [...rocmPids.matchAll(/^(\d+)\s+(\S+)/gm)].map((m) => [m[1], m[2]]);
    const psTxt = pids.map(([pid, name]) => `${pid.padStart(8)} erin ${String(600).padStart(10)}  50.0    524288 ${name} -deffnm md`).join('\n') + '\n';
    return {
      gpuCsv: '',
      appsCsv: '',
      psTxt,
      healthCsv: '',
      rocmJson: readFileSync(join(ROCM_FIXTURES, 'marimo-9237-rx7900xt-showproductname-showuse-showmeminfo-vram.json'), 'utf8'),
      rocmPids,
      rocmTable: readFileSync(join(ROCM_FIXTURES, 'jax-19453-2x7900xtx-default-2024.txt'), 'utf8'),
    };
  }
  if (kind === 'h200-mig') {
    const section = (title: string) => captureSection(H200_MIG_CAPTURE, title);
    const query = section('load :: query-gpu (csv, what the exporter parses)');
    const gpuCsv = csvRowByName(query, ['index', 'uuid', 'name', 'memory.used', 'memory.total', 'utilization.gpu', 'temperature.gpu']) + '\n';
    const apps = parseSmiCsv(section('load :: query-compute-apps (per-process)')).processes;
    const appsCsv = apps.map((a) => [a.gpuUuid, a.pid, a.memoryMiB, a.name].join(', ')).join('\n') + '\n';
    // Synthetic ps columns, as for the H100: 5 minutes, 99.0 % CPU, 1 GiB resident each, user dave.
    const psTxt = apps.map((a) => `${String(a.pid).padStart(8)} dave ${String(300).padStart(10)}  99.0   1048576 ${a.name}`).join('\n') + '\n';
    return {
      gpuCsv,
      appsCsv,
      psTxt,
      healthCsv: csvRowByName(query, SMI_HEALTH_FIELD_SETS[0]) + '\n',
      listTxt: section('capabilities :: list (-L)'),
      tableTxt: section('load :: nvidia-smi (default table)'),
    };
  }
  if (kind === 'h200') {
    const table = parseSmiTable(f('nvidia-smi/13-8x-h200-8procs-570.txt'));
    const apps = parseSmiCsv(f('nvidia-smi/37-8x-h200-query-compute-apps-not-found-procname.csv')).processes;
    const uuids = apps.map((a) => a.gpuUuid!);
    const gpuCsv = table.gpus
      .map((g, i) => [g.index, uuids[i] ?? `GPU-${i}`, g.name, g.memoryUsedMiB, g.memoryTotalMiB, g.utilizationPct, g.temperatureC].join(', '))
      .join('\n');
    const appsCsv = apps.map((a) => [a.gpuUuid, a.pid, a.memoryMiB, a.name].join(', ')).join('\n');
    // The last process (pid 1758887, "[Not Found]") is in a container: ps does not see it.
    // The ps columns are synthetic (the fixtures hold no ps output): pid user etimes pcpu rss(KiB) args,
    // as `ps -o pid=,user=,etimes=,pcpu=,rss=,args=` prints them; process i ran i+1 hours, uses
    // 97.5-i % CPU and (20+i) GiB of host memory.
    const psTxt = apps
      .slice(0, -1)
      .map(
        (a, i) =>
          `${String(a.pid).padStart(8)} ${i % 2 ? 'bob' : 'alice'} ${String(3600 * (i + 1)).padStart(10)} ${(97.5 - i).toFixed(1).padStart(5)} ${String((20 + i) * 1048576).padStart(9)} ${a.name} -m vllm.entrypoints.openai.api_server --tp 8`,
      )
      .join('\n');
    // The health query's rows from the same table: each GPU's "115W /  700W" and its Volatile Uncorr. ECC
    // cell; the fields a table does not show (retired pages, remapped rows, clock event reasons) are [N/A].
    const text = f('nvidia-smi/13-8x-h200-8procs-570.txt');
    const ecc = [...text.matchAll(/^\|\s+(\d+)\s+NVIDIA H200\b.*\|\s+(\S+)\s+\|$/gm)].map((m) => m[2]);
    const power = [...text.matchAll(/(\d+)W\s*\/\s*(\d+)W/g)].map((m) => [m[1], m[2]]);
    const healthCsv = table.gpus.map((g, i) => [g.index, power[i][0], power[i][1], ecc[i], '[N/A]', '[N/A]', '[N/A]', '[N/A]'].join(', ')).join('\n');
    return { gpuCsv: gpuCsv + '\n', appsCsv: appsCsv + '\n', psTxt: psTxt + '\n', healthCsv: healthCsv + '\n' };
  }
  const q = f('nvidia-smi/27-h100-healthy-same-cluster-query-gpu.csv');
  const g = parseSmiCsv(q).gpus[0];
  const apps = parseSmiCsv(f('nvidia-smi/17-h100-mig-query-compute-apps-3procs-590.csv')).processes;
  const gpuCsv = [g.index, apps[0].gpuUuid, 'NVIDIA H100 80GB HBM3', g.memoryUsedMiB, 81559, g.utilizationPct, g.temperatureC].join(', ') + '\n';
  const appsCsv = apps.map((a) => [a.gpuUuid, a.pid, a.memoryMiB, a.name].join(', ')).join('\n') + '\n';
  // Synthetic ps columns, as for the H200: 2 minutes, 99.0 % CPU, 2 GiB resident each.
  const psTxt = apps.map((a) => `${String(a.pid).padStart(8)} carol ${String(120).padStart(10)}  99.0   2097152 ${a.name} --size 2G`).join('\n') + '\n';
  return { gpuCsv, appsCsv, psTxt, healthCsv: h100Health({}) };
}

/**
 * The health query's row (index 0) from the real H100 load capture (../prometheus/nvidia-smi-h100-load-query-gpu.csv),
 * units cut as nounits prints them; `override` replaces fields by name (the flagged host's remap state comes
 * from ../gpu-health/remapped-rows-pending-q-fragment.txt). `names` picks the field set (older drivers' names).
 */
export function h100Health(override: Record<string, string>, names: readonly string[] = SMI_HEALTH_FIELD_SETS[0]): string {
  const [header, row] = readFileSync(resolve(fixturesDir, '../prometheus/nvidia-smi-h100-load-query-gpu.csv'), 'utf8').split('\n');
  const fields = header.split(',').map((h) => h.trim().replace(/ \[.*\]$/, ''));
  const cells = row.split(',').map((c) => c.trim().replace(/ (W|MiB|%)$/, ''));
  const value = (name: string) => override[name] ?? cells[fields.indexOf(name.replace('clocks_throttle_reasons.', 'clocks_event_reasons.'))];
  return names.map(value).join(', ') + '\n';
}

/** `Pending : Yes` of the real `nvidia-smi -q` Remapped Rows fragment, as the health query's Yes/No cell. */
export function remapPendingFromFragment(): string {
  const text = readFileSync(resolve(fixturesDir, '../gpu-health/remapped-rows-pending-q-fragment.txt'), 'utf8');
  return /^\s*Pending\s*:\s*(Yes|No)\s*$/m.exec(text)![1];
}

function sh(path: string, text: string) {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/** Client key shared by all instances of one world. */
export function makeClientKey(dir: string): { keyFile: string; pub: string } {
  mkdirSync(dir, { recursive: true });
  const keyFile = join(dir, 'client_key');
  if (!existsSync(keyFile)) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile, '-C', 'gpu-doctor-test']);
  return { keyFile, pub: readFileSync(keyFile + '.pub', 'utf8') };
}

export interface SshdOptions {
  mode?: SmiMode;
  data?: 'h200' | 'h100' | 'h200-mig' | 'rocm';
  health?: HealthMode;
  hostKeyFrom?: string;
  skipShellRc?: boolean;
  /** sshd's MaxSessions (sessions per connection); 20 unless set. */
  maxSessions?: number;
  /** A broken host: every session writes to stderr without end instead of running its command. */
  floodStderr?: boolean;
  /** A CA private key: the host key is signed by it (ssh-keygen -s, principal 127.0.0.1) and served as a HostCertificate. */
  hostCertificateCa?: string;
  /** Scheduling priority of sshd and every session it forks (os.setPriority): a bench that runs the fleet on the bot's own machine gives it the CPU left over, as remote hosts would take none. */
  nice?: number;
}

/**
 * The fake GPU host's tools in `bin`: nvidia-smi, ps and free answering the bot's exact calls from the
 * fixture data (files kept in `dir`). sshd's sessions run them; a localhost test puts `bin` first on PATH.
 */
export function writeFakeGpuTools(dir: string, bin: string, opts: Pick<SshdOptions, 'mode' | 'data' | 'health'> = {}): void {
  mkdirSync(bin, { recursive: true });
  const data = fixtureData(opts.data ?? 'h200');
  writeFileSync(join(dir, 'gpu.csv'), data.gpuCsv);
  writeFileSync(join(dir, 'apps.csv'), data.appsCsv);
  writeFileSync(join(dir, 'ps.txt'), data.psTxt);
  // `nvidia-smi -L` and the default table only where the data has them (a host without MIG answers -L as an unknown call).
  if (data.listTxt) writeFileSync(join(dir, 'list.txt'), data.listTxt);
  if (data.tableTxt) writeFileSync(join(dir, 'table.txt'), data.tableTxt);
  const health = opts.health ?? 'ok';
  const oldest = SMI_HEALTH_FIELD_SETS[SMI_HEALTH_FIELD_SETS.length - 1];
  writeFileSync(
    join(dir, 'health.csv'),
    health === 'remap-pending'
      ? h100Health({ 'remapped_rows.pending': remapPendingFromFragment() })
      : health === 'old-driver'
        ? h100Health({}, oldest)
        : data.healthCsv,
  );
  const healthCases = SMI_HEALTH_FIELD_SETS.map((set, i) => {
    const refused = health === 'no-fields' || (health === 'old-driver' && i < SMI_HEALTH_FIELD_SETS.length - 1);
    const answer = refused ? `echo 'Field "${set[set.length - 1]}" is not a valid field to query.'; exit 2` : `cat '${dir}/health.csv'`;
    return `  "--query-gpu=${set.join(',')} --format=csv,noheader,nounits") ${answer} ;;`;
  }).join('\n');
  // An AMD host: rocm-smi answers the bot's two calls, and there is no nvidia-smi.
  if (data.rocmJson) {
    writeFileSync(join(dir, 'rocm.json'), data.rocmJson);
    writeFileSync(join(dir, 'rocm-pids.txt'), data.rocmPids ?? '');
    writeFileSync(join(dir, 'rocm-table.txt'), data.rocmTable ?? '');
    sh(
      join(bin, 'rocm-smi'),
      `#!/bin/sh
case "$*" in
  "--showproductname --showuse --showmeminfo vram --json") cat '${dir}/rocm.json' ;;
  "--showpids") cat '${dir}/rocm-pids.txt' ;;
  "") cat '${dir}/rocm-table.txt' ;;
  *) echo "fake rocm-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
`,
    );
  }
  const mode = data.rocmJson ? 'missing' : (opts.mode ?? 'ok');
  // A bin written again for another host kind (a localhost test) loses the nvidia-smi it had.
  if (mode === 'missing') rmSync(join(bin, 'nvidia-smi'), { force: true });
  if (mode !== 'missing') {
    const body =
      mode === 'hang'
        ? 'sleep 60\n'
        : mode === 'driver'
          ? `cat '${join(fixturesDir, 'nvidia-smi/25-error-nvml-mismatch-with-library-version.txt')}'\nexit 18\n`
          : `# A test may write seconds into smi-delay to make every call sleep first (a slow or wedging GPU).
[ -f '${dir}/smi-delay' ] && sleep "$(cat '${dir}/smi-delay')"
case "$*" in
  "--query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu,temperature.gpu --format=csv,noheader,nounits") cat '${dir}/gpu.csv' ;;
  "--query-compute-apps=gpu_uuid,pid,used_memory,process_name --format=csv,noheader,nounits") cat '${dir}/apps.csv' ;;
${healthCases}
${data.listTxt ? `  "-L") cat '${dir}/list.txt' ;;\n  "") cat '${dir}/table.txt' ;;` : ''}
  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
`;
    sh(join(bin, 'nvidia-smi'), `#!/bin/sh\n${body}`);
  }
  sh(
    join(bin, 'ps'),
    `#!/bin/sh
pids=""
while [ $# -gt 0 ]; do if [ "$1" = "-p" ]; then shift; pids="$1"; fi; shift; done
rc=1
for p in $(echo "$pids" | tr ',' ' '); do
  line=$(grep "^ *$p " '${dir}/ps.txt') && { echo "$line"; rc=0; }
done
exit $rc
`,
  );
  sh(join(bin, 'free'), `#!/bin/sh\n[ "$*" = "-b" ] || exit 2\ncat '${join(fixturesDir, 'free/17-free-b-6gb.txt')}'\n`);
}

export async function startSshd(dir: string, clientPub: string, opts: SshdOptions = {}): Promise<SshdInstance> {
  if (!SSHD) throw new Error('sshd not installed');
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true });
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const hostKey = join(dir, 'host_key');
  if (!existsSync(hostKey)) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey, '-C', 'host']);
  const publicKeyLine = readFileSync(hostKey + '.pub', 'utf8').trim();
  const fingerprint = execFileSync('ssh-keygen', ['-lf', hostKey + '.pub'], { encoding: 'utf8' }).split(/\s+/)[1];
  if (opts.hostCertificateCa)
    execFileSync('ssh-keygen', ['-q', '-s', opts.hostCertificateCa, '-I', 'gpu-doctor-test-host', '-h', '-n', '127.0.0.1', '-V', '-5m:+1h', hostKey + '.pub'], {
      stdio: 'ignore',
    });
  writeFileSync(join(dir, 'authorized_keys'), clientPub);
  writeFakeGpuTools(dir, bin, opts);
  const auditLog = join(dir, 'audit.log');
  writeFileSync(auditLog, '');
  const sessionPids = join(dir, 'sessions.pid');
  writeFileSync(sessionPids, '');
  sh(
    join(dir, 'wrapper.sh'),
    `#!/bin/sh
printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >> '${auditLog}'
echo $$ >> '${sessionPids}'
PATH='${bin}':/usr/bin:/bin
export PATH
${opts.floodStderr ? `exec yes 'gpu-doctor test: a broken host writing to stderr without end' >&2` : `exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"`}
`,
  );
  const port = await freePort();
  const cfg = join(dir, 'sshd_config');
  writeFileSync(
    cfg,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      ...(opts.hostCertificateCa ? [`HostCertificate ${hostKey}-cert.pub`] : []),
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'UsePAM no',
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin yes',
      'MaxStartups 200:30:400',
      `MaxSessions ${opts.maxSessions ?? 20}`,
      'LogLevel ERROR',
      `ForceCommand ${join(dir, 'wrapper.sh')}`,
      // Debian's bash sources ~/.bashrc for commands run by sshd when SHLVL < 2; SHLVL=1 here makes the
      // login shell level 2, so a heavy rc file of this machine's account (pyenv init) is left out.
      ...(opts.skipShellRc ? ['SetEnv SHLVL=1'] : []),
      '',
    ].join('\n'),
  );
  const proc = spawn(SSHD, ['-D', '-e', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  if (opts.nice !== undefined && proc.pid !== undefined) setPriority(proc.pid, opts.nice);
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  await waitForBanner(port, 5000).catch((e) => {
    proc.kill('SIGKILL');
    throw new Error(`sshd did not start: ${e.message}\n${stderr}`);
  });
  return {
    port,
    dir,
    fingerprint,
    publicKeyLine,
    auditLog,
    sessionPids,
    proc,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        proc.kill('SIGKILL');
      }
      await exited;
    },
  };
}

function waitForBanner(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((res, rej) => {
    const attempt = () => {
      const s = connect(port, '127.0.0.1');
      s.once('data', (d) => {
        s.destroy();
        if (String(d).startsWith('SSH-')) res();
        else rej(new Error('not ssh'));
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) rej(new Error('timeout'));
        else setTimeout(attempt, 30);
      });
    };
    attempt();
  });
}

/** A TCP listener that accepts and never says anything (a wedged host). */
export async function silentListener(): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    server,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
