// Platform-neutral replies for status / mem / hosts results.
import { t, type Locale, type MessageKey } from '../core/i18n.js';
import { renderAll } from '../core/message.js';
import type { Reply, ReplySection } from '../core/reply.js';
import type {
  HostProblems,
  GpuHealthStatus,
  GpuProcessStatus,
  GpuStatus,
  HostInfo,
  HostMemResult,
  HostStatusResult,
  HostTestResult,
  MigInstanceStatus,
} from '../core/services.js';
import { healthFindings, type ClockReason, type HealthFinding } from '../readings/nvidia-smi-health.js';
import { Mentions } from '../core/mention.js';
import { personOf, type OwnersService } from '../owners/directory.js';

const fmt = (v: number | null | undefined, unit = '') => (v === null || v === undefined ? 'n/a' : `${v}${unit}`);

export function bar(used: number | null, total: number | null, width = 10): string {
  if (used === null || total === null || total <= 0) return '·'.repeat(width);
  const n = Math.max(0, Math.min(width, Math.round((used / total) * width)));
  return '█'.repeat(n) + '░'.repeat(width - n);
}

function gib(bytes: number | null): string {
  return bytes === null ? 'n/a' : `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

/** A process's run time the way ps's etime reads at a glance: 45s, 12m, 3h05m, 2d04h. */
export function runTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return 'n/a';
  const s = Math.floor(seconds);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor((s % 86400) / 3600))}h`;
}

/** Host memory of a process: MiB below 1 GiB, GiB with one decimal above. */
export function rssCell(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return 'n/a';
  return bytes < 2 ** 30 ? `${Math.round(bytes / 2 ** 20)} MiB` : `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

function shortCommand(c: string | null, n = 60): string {
  if (!c) return '?';
  return c.length > n ? c.slice(0, n - 1) + '…' : c;
}

/** Draw and cap: `115/700 W`, `115 W` without a cap. */
export function powerCell(h: GpuHealthStatus | undefined): string {
  if (!h || h.powerDrawW === null) return 'n/a';
  const draw = Math.round(h.powerDrawW);
  return h.powerLimitW === null ? `${draw} W` : `${draw}/${Math.round(h.powerLimitW)} W`;
}

/** Why clocks are held down, idle left out (an idle GPU clocks down by design). */
function clocksCell(h: GpuHealthStatus | undefined, loc: Locale | undefined): string {
  if (!h?.clockReasons) return 'n/a';
  return h.clockReasons
    .filter(isClockReason)
    .filter((r) => r !== 'gpu_idle')
    .map((r) => t(loc, CLOCK_KEYS[r]))
    .join(', ');
}

const CLOCK_KEYS: Record<ClockReason, MessageKey> = {
  gpu_idle: 'status.clock.gpu_idle',
  applications_clocks_setting: 'status.clock.applications_clocks_setting',
  sw_power_cap: 'status.clock.sw_power_cap',
  hw_slowdown: 'status.clock.hw_slowdown',
  sync_boost: 'status.clock.sync_boost',
  sw_thermal_slowdown: 'status.clock.sw_thermal_slowdown',
  hw_thermal_slowdown: 'status.clock.hw_thermal_slowdown',
  hw_power_brake_slowdown: 'status.clock.hw_power_brake_slowdown',
  display_clock_setting: 'status.clock.display_clock_setting',
};
const isClockReason = (r: string): r is ClockReason => Object.hasOwn(CLOCK_KEYS, r);

const HEALTH_KEYS: Record<HealthFinding, MessageKey> = {
  remap_failure: 'status.health.remap_failure',
  remap_pending: 'status.health.remap_pending',
  retired_pages_pending: 'status.health.retired_pages_pending',
  ecc_uncorrected: 'status.health.ecc_uncorrected',
  xid: 'status.health.xid',
};

/** One flagged GPU's finding, with what to do about it. */
function healthLine(f: HealthFinding, g: GpuStatus, loc: Locale | undefined): string {
  const vars = { gpu: g.index, count: g.health?.eccUncorrectedVolatile ?? 0, xid: g.health?.lastXid ?? 0 };
  return `⚠ ${t(loc, HEALTH_KEYS[f], vars)}`;
}

const migColumns = (loc: Locale | undefined) => [
  t(loc, 'status.col.gpu'),
  t(loc, 'status.col.migGi'),
  t(loc, 'status.col.migCi'),
  t(loc, 'status.col.migDevice'),
  t(loc, 'status.col.migProfile'),
  t(loc, 'status.col.memory'),
];

/** A memory cell: bar and used/total MiB, or `n/a` where the source gives neither (a MIG instance dcgm-exporter names without memory). */
const memoryCell = (used: number | null, total: number | null) =>
  `${bar(used, total)} ${used === null && total === null ? 'n/a' : `${fmt(used)}/${fmt(total)} MiB`}`;

const migCells = (gpuIndex: number, m: MigInstanceStatus) => [
  String(gpuIndex),
  fmt(m.gi),
  fmt(m.ci),
  fmt(m.device),
  m.profile ?? 'n/a',
  memoryCell(m.memoryUsedMiB, m.memoryTotalMiB),
];

/** The pids on one MIG instance (its GPU, GPU instance and compute instance), `—` for none. */
function migProcesses(gpuIndex: number, m: MigInstanceStatus, processes: readonly GpuProcessStatus[]): string {
  const on = processes.filter((p) => p.gpuIndex === gpuIndex && p.gi !== undefined && p.gi === m.gi && p.ci === m.ci);
  return on.length ? on.map((p) => (p.user ? `${p.pid} (${p.user})` : String(p.pid))).join(', ') : '—';
}

/** `owners`: unix users are shown as the people they map to ("Alice (alice)"), where a mapping exists. */
export function statusReply(results: HostStatusResult[], owners?: Pick<OwnersService, 'lookup'>, loc?: Locale): Reply {
  const sections: ReplySection[] = [];
  const people = new Mentions();
  const failed = results.filter((r): r is Extract<HostStatusResult, { ok: false }> => !r.ok);
  let flagged = false;
  for (const r of results) {
    if (!r.ok) continue;
    // Power, ECC and clock columns only where the host reported them (an older driver, a source without them: as before).
    const withHealth = r.gpus.some((g) => g.health);
    const rows = r.gpus.map((g) => [
      String(g.index),
      g.name ?? '?',
      memoryCell(g.memoryUsedMiB, g.memoryTotalMiB),
      fmt(g.utilizationPct, '%'),
      fmt(g.temperatureC, '°C'),
      ...(withHealth ? [powerCell(g.health), fmt(g.health?.eccUncorrectedVolatile), clocksCell(g.health, loc)] : []),
      g.error ?? '',
    ]);
    sections.push({
      heading: `${r.name} (${r.elapsedMs} ms)`,
      table: {
        columns: [
          t(loc, 'status.col.gpu'),
          t(loc, 'status.col.name'),
          t(loc, 'status.col.memory'),
          t(loc, 'status.col.util'),
          t(loc, 'status.col.temp'),
          ...(withHealth ? [t(loc, 'status.col.power'), t(loc, 'status.col.ecc'), t(loc, 'status.col.clocks')] : []),
          t(loc, 'status.col.error'),
        ],
        rows,
      },
    });
    const migRows = r.gpus.flatMap((g) => (g.mig ?? []).map((m) => [...migCells(g.index, m), migProcesses(g.index, m, r.processes)]));
    if (migRows.length)
      sections.push({ heading: t(loc, 'status.mig.heading'), table: { columns: [...migColumns(loc), t(loc, 'status.col.migProcesses')], rows: migRows } });
    const findings = r.gpus.flatMap((g) => healthFindings(g.health).map((f) => healthLine(f, g, loc)));
    if (findings.length) {
      flagged = true;
      sections.push({ heading: t(loc, 'status.health.heading'), text: findings.join('\n') });
    }
    if (r.processes.length)
      sections.push({
        table: {
          columns: [
            t(loc, 'status.col.gpu'),
            t(loc, 'status.col.user'),
            'PID',
            t(loc, 'status.col.gpuMem'),
            t(loc, 'status.col.runTime'),
            t(loc, 'status.col.cpu'),
            t(loc, 'status.col.rss'),
            t(loc, 'status.col.command'),
          ],
          // A pid ps does not know has no user: its command cell says why (HIDDEN_PID_TEXT, as /gpu watch shows it).
          rows: r.processes.map((p) => [
            fmt(p.gpuIndex),
            personOf(people, owners, r.name, p.user) ?? '—',
            String(p.pid),
            fmt(p.memoryMiB, ' MiB'),
            runTime(p.elapsedSeconds),
            fmt(p.cpuPct, '%'),
            rssCell(p.rssBytes),
            shortCommand(p.command),
          ]),
        },
      });
    else sections.push({ text: t(loc, 'status.noProcesses') });
    if (r.warning) sections.push({ text: `⚠ ${said(loc, r, r.warning)}` });
  }
  if (failed.length) sections.push({ heading: t(loc, 'hostsRender.unreachable'), text: failed.map((f) => `${f.name}: ${said(loc, f, f.error)}`).join('\n') });
  const ok = results.length - failed.length;
  return {
    title: t(loc, 'status.title', { ok, n: results.length }),
    severity: failed.length ? (ok ? 'warning' : 'error') : flagged ? 'warning' : 'ok',
    sections,
    ...(people.size ? { mentions: people.table() } : {}),
  };
}

/** Names shown in a progress line before "and N more". */
const PROGRESS_NAMES = 12;

const someNames = (names: string[], loc: Locale | undefined) =>
  names.length > PROGRESS_NAMES
    ? t(loc, 'status.progress.andMore', { names: names.slice(0, PROGRESS_NAMES).join(', '), n: names.length - PROGRESS_NAMES })
    : names.join(', ');

/**
 * The interim reply of a status fan-out: how many hosts answered, which failed, which are still awaited.
 * `all` is every host asked, in order; the final reply (statusReply) carries the tables.
 */
export function statusProgressReply(answered: readonly HostStatusResult[], all: readonly string[], loc?: Locale): Reply {
  const total = all.length;
  if (answered.length === 0)
    return {
      title: t(loc, total === 1 ? 'status.progress.checkingOne' : 'status.progress.checking', { n: total }),
      severity: 'info',
      sections: [{ text: t(loc, 'status.progress.asking', { names: someNames([...all], loc) }) }],
    };
  const done = new Set(answered.map((r) => r.name));
  const failed = answered.filter((r) => !r.ok);
  const waiting = all.filter((n) => !done.has(n));
  const sections: ReplySection[] = [];
  if (waiting.length) sections.push({ text: t(loc, 'status.progress.waiting', { names: someNames(waiting, loc) }) });
  if (failed.length)
    sections.push({
      text: t(loc, 'status.progress.failing', {
        names: someNames(
          failed.map((f) => f.name),
          loc,
        ),
      }),
    });
  return { title: t(loc, 'status.progress.title', { answered: answered.length, n: total }), severity: 'info', sections };
}

/**
 * A host's error or warnings as its source said them (`problems`: catalogue messages, an SSH or exporter's
 * own words), each in the reply's language; an answer without them (a test's stand-in) shows its line as it is.
 */
function said(loc: Locale | undefined, r: HostProblems, line: string): string {
  return r.problems?.length ? renderAll(loc, r.problems) : line;
}

export function memReply(results: HostMemResult[], loc?: Locale): Reply {
  const rows: string[][] = [];
  const warnings: string[] = [];
  const failed: string[] = [];
  for (const r of results) {
    if (!r.ok) {
      failed.push(`${r.name}: ${said(loc, r, r.error)}`);
      continue;
    }
    const m = r.memory;
    rows.push([
      r.name,
      gib(m.totalBytes),
      gib(m.usedBytes),
      gib(m.availableBytes),
      m.swapTotalBytes === null ? 'n/a' : `${gib(m.swapUsedBytes)} / ${gib(m.swapTotalBytes)}`,
    ]);
    if (r.warning) warnings.push(`⚠ ${r.name}: ${said(loc, r, r.warning)}`);
    if (m.availableBytes !== null && m.availableBytes < 0.1 * m.totalBytes)
      warnings.push(`⚠ ${t(loc, 'mem.low', { host: r.name, available: gib(m.availableBytes), pct: ((100 * m.availableBytes) / m.totalBytes).toFixed(1) })}`);
  }
  const sections: ReplySection[] = [];
  const migTables: ReplySection[] = results.flatMap((r) =>
    r.ok && r.mig?.length
      ? [
          {
            heading: t(loc, 'mem.mig.heading', { host: r.name }),
            table: { columns: migColumns(loc), rows: r.mig.flatMap((g) => g.instances.map((m) => migCells(g.gpuIndex, m))) },
          },
        ]
      : [],
  );
  if (rows.length)
    sections.push({
      table: { columns: [t(loc, 'mem.col.host'), t(loc, 'mem.col.total'), t(loc, 'mem.col.used'), t(loc, 'mem.col.available'), t(loc, 'mem.col.swap')], rows },
    });
  sections.push(...migTables);
  if (warnings.length) sections.push({ text: warnings.join('\n') });
  if (failed.length) sections.push({ heading: t(loc, 'hostsRender.unreachable'), text: failed.join('\n') });
  return { title: t(loc, 'mem.title'), severity: failed.length && !rows.length ? 'error' : warnings.length || failed.length ? 'warning' : 'ok', sections };
}

/** The key and where it is trusted from, or that nothing trusts it yet (the connection would be refused). */
function hostKeyCell(h: HostInfo, loc?: Locale): string {
  if (!h.keyTrust) return '-';
  const from = {
    config: () => t(loc, 'hostsRender.keyTrust.config'),
    trust: () => t(loc, 'hostsRender.keyTrust.trust'),
    known_hosts: () => t(loc, 'hostsRender.keyTrust.known_hosts'),
    cert_authority: () => t(loc, 'hostsRender.keyTrust.cert_authority'),
    none: () => t(loc, 'hostsRender.keyTrust.none', { name: h.name }),
  }[h.keyTrust]();
  return h.hostKey ? `${h.hostKey} (${from})` : from;
}

export function listReply(hosts: HostInfo[], loc?: Locale): Reply {
  return {
    title: t(loc, 'hostsRender.list.title', { n: hosts.length }),
    severity: 'info',
    sections: [
      {
        table: {
          columns: [t(loc, 'hostsRender.col.name'), t(loc, 'hostsRender.col.target'), t(loc, 'hostsRender.col.from'), t(loc, 'hostsRender.col.hostKey')],
          rows: hosts.map((h) => [h.name, h.target, h.origin, hostKeyCell(h, loc)]),
        },
      },
    ],
  };
}

export function testReply(r: HostTestResult, loc?: Locale): Reply {
  return {
    title: t(loc, r.ok ? 'hostsRender.test.ok' : 'hostsRender.test.failed', { name: r.name }),
    severity: r.ok ? 'ok' : 'error',
    sections: [
      ...(r.fingerprint ? [{ fields: [{ label: t(loc, 'hostsRender.col.hostKey'), value: r.fingerprint }] }] : []),
      {
        table: {
          columns: [t(loc, 'hostsRender.col.step'), t(loc, 'hostsRender.col.result'), t(loc, 'hostsRender.col.time'), t(loc, 'hostsRender.col.detail')],
          rows: r.steps.map((s) => [s.step, s.ok ? 'ok' : t(loc, 'hostsRender.stepFailed'), `${s.ms} ms`, s.detail ?? '']),
        },
      },
    ],
  };
}
