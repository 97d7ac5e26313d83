// Platform-neutral replies for status / mem / hosts results.
import type { Reply, ReplySection } from '../core/reply.js';
import type { HostInfo, HostMemResult, HostStatusResult, HostTestResult } from '../core/services.js';
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

function shortCommand(c: string | null, n = 60): string {
  if (!c) return '?';
  return c.length > n ? c.slice(0, n - 1) + '…' : c;
}

/** `owners`: unix users are shown as the people they map to ("Alice (alice)"), where a mapping exists. */
export function statusReply(results: HostStatusResult[], owners?: Pick<OwnersService, 'lookup'>): Reply {
  const sections: ReplySection[] = [];
  const people = new Mentions();
  const failed = results.filter((r): r is Extract<HostStatusResult, { ok: false }> => !r.ok);
  for (const r of results) {
    if (!r.ok) continue;
    const rows = r.gpus.map((g) => [
      String(g.index),
      g.name ?? '?',
      `${bar(g.memoryUsedMiB, g.memoryTotalMiB)} ${fmt(g.memoryUsedMiB)}/${fmt(g.memoryTotalMiB)} MiB`,
      fmt(g.utilizationPct, '%'),
      fmt(g.temperatureC, '°C'),
      g.error ?? '',
    ]);
    sections.push({ heading: `${r.name} (${r.elapsedMs} ms)`, table: { columns: ['GPU', 'Name', 'Memory', 'Util', 'Temp', 'Error'], rows } });
    if (r.processes.length)
      sections.push({
        table: {
          columns: ['GPU', 'User', 'PID', 'GPU mem', 'Command'],
          // A pid ps does not know has no user: its command cell says why (HIDDEN_PID_TEXT, as /gpu watch shows it).
          rows: r.processes.map((p) => [
            fmt(p.gpuIndex),
            personOf(people, owners, r.name, p.user) ?? '—',
            String(p.pid),
            fmt(p.memoryMiB, ' MiB'),
            shortCommand(p.command),
          ]),
        },
      });
    else sections.push({ text: 'No GPU processes.' });
    if (r.warning) sections.push({ text: `⚠ ${r.warning}` });
  }
  if (failed.length) sections.push({ heading: 'Unreachable or failing', text: failed.map((f) => `${f.name}: ${f.error}`).join('\n') });
  const ok = results.length - failed.length;
  return {
    title: `GPU status: ${ok}/${results.length} host(s) answered`,
    severity: failed.length ? (ok ? 'warning' : 'error') : 'ok',
    sections,
    ...(people.size ? { mentions: people.table() } : {}),
  };
}

/** Names shown in a progress line before "and N more". */
const PROGRESS_NAMES = 12;

const someNames = (names: string[]) =>
  names.length > PROGRESS_NAMES ? `${names.slice(0, PROGRESS_NAMES).join(', ')} and ${names.length - PROGRESS_NAMES} more` : names.join(', ');

/**
 * The interim reply of a status fan-out: how many hosts answered, which failed, which are still awaited.
 * `all` is every host asked, in order; the final reply (statusReply) carries the tables.
 */
export function statusProgressReply(answered: readonly HostStatusResult[], all: readonly string[]): Reply {
  const total = all.length;
  if (answered.length === 0)
    return { title: `Checking ${total} host${total === 1 ? '' : 's'}…`, severity: 'info', sections: [{ text: `Asking ${someNames([...all])}.` }] };
  const done = new Set(answered.map((r) => r.name));
  const failed = answered.filter((r) => !r.ok);
  const waiting = all.filter((n) => !done.has(n));
  const sections: ReplySection[] = [];
  if (waiting.length) sections.push({ text: `Waiting for ${someNames(waiting)}.` });
  if (failed.length) sections.push({ text: `Not answering so far: ${someNames(failed.map((f) => f.name))}.` });
  return { title: `GPU status: ${answered.length} of ${total} hosts answered…`, severity: 'info', sections };
}

export function memReply(results: HostMemResult[]): Reply {
  const rows: string[][] = [];
  const warnings: string[] = [];
  const failed: string[] = [];
  for (const r of results) {
    if (!r.ok) {
      failed.push(`${r.name}: ${r.error}`);
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
    if (m.availableBytes !== null && m.availableBytes < 0.1 * m.totalBytes)
      warnings.push(
        `⚠ ${r.name}: only ${gib(m.availableBytes)} available (${((100 * m.availableBytes) / m.totalBytes).toFixed(1)}% of RAM): the OOM killer is near`,
      );
  }
  const sections: ReplySection[] = [];
  if (rows.length) sections.push({ table: { columns: ['Host', 'Total', 'Used', 'Available', 'Swap used/total'], rows } });
  if (warnings.length) sections.push({ text: warnings.join('\n') });
  if (failed.length) sections.push({ heading: 'Unreachable or failing', text: failed.join('\n') });
  return { title: 'Host memory', severity: failed.length && !rows.length ? 'error' : warnings.length || failed.length ? 'warning' : 'ok', sections };
}

export function listReply(hosts: HostInfo[]): Reply {
  return {
    title: `${hosts.length} host(s)`,
    severity: 'info',
    sections: [
      { table: { columns: ['Name', 'Target', 'From', 'Host key'], rows: hosts.map((h) => [h.name, h.target, h.origin, h.hostKey ?? '(known_hosts)']) } },
    ],
  };
}

export function testReply(t: HostTestResult): Reply {
  return {
    title: `hosts test ${t.name}: ${t.ok ? 'ok' : 'failed'}`,
    severity: t.ok ? 'ok' : 'error',
    sections: [
      ...(t.fingerprint ? [{ fields: [{ label: 'Host key', value: t.fingerprint }] }] : []),
      { table: { columns: ['Step', 'Result', 'Time', 'Detail'], rows: t.steps.map((s) => [s.step, s.ok ? 'ok' : 'FAILED', `${s.ms} ms`, s.detail ?? '']) } },
    ],
  };
}
