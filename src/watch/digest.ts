// Leak digest: findings -> a platform-neutral Reply (grouped by host and owner, worst first, with a
// sparkline and the first fix from the knowledge rule), the CLI's JSON contract, and the "already
// reported unless worse" dedup used by scheduled digests.
import { t, type Locale, type MessageKey } from '../core/i18n.js';
import type { Reply, ReplyFile, ReplySection } from '../core/reply.js';
import { Mentions } from '../core/mention.js';
import { personOf, type OwnersService } from '../owners/directory.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import { computeFixes } from '../diagnose/fixes/index.js';
import { emptyReadings } from '../readings/types.js';
import type { Finding } from './types.js';
import { creepFacts, type CreepPattern } from './creep-shape.js';

/** A chart of one finding over its stored samples (src/watch/chart-store.ts), or none. */
export type ChartOf = (f: Finding) => ReplyFile | undefined;

/** The first fix of the finding's knowledge rule, computed by the same code the diagnosis uses. */
export function fixSummary(rule: string, rules?: RuleBase, pattern?: CreepPattern, loc?: Locale): string | undefined {
  const r = rules?.rules.find((x) => x.id === rule);
  if (!r) return undefined;
  return computeFixes(r.fixes, { incident: creepFacts(pattern), readings: emptyReadings() }, loc)[0]?.summary;
}

const CREEP_WORDS: Record<CreepPattern, MessageKey> = {
  steady: 'creep.steady',
  validation_steps: 'creep.validation_steps',
  despite_empty_cache: 'creep.despite_empty_cache',
};

/** A finding's one line of why, in `loc` where the detector gave its words (`why`), and how its memory grows. */
export function findingDetail(f: Finding, loc?: Locale): string | undefined {
  const detail = f.why ? t(loc, f.why.key, f.why.vars) : f.detail;
  return detail && f.pattern ? t(loc, 'digest.detail.pattern', { detail, pattern: t(loc, CREEP_WORDS[f.pattern]) }) : detail;
}

const BARS = '▁▂▃▄▅▆▇█';

export function sparkline(series: readonly number[], width = 24): string {
  const vals = series.filter((v) => Number.isFinite(v));
  if (!vals.length) return '';
  // Keep the newest `width` points' shape: downsample by max.
  let pts = vals;
  if (vals.length > width) {
    pts = [];
    for (let i = 0; i < width; i++) {
      const a = Math.floor((i * vals.length) / width);
      const b = Math.max(a + 1, Math.floor(((i + 1) * vals.length) / width));
      let m = -Infinity;
      for (let j = a; j < b; j++) m = Math.max(m, vals[j]);
      pts.push(m);
    }
  }
  const lo = Math.min(...pts);
  const hi = Math.max(...pts);
  if (hi - lo < 1e-9) return BARS[0].repeat(pts.length);
  return pts.map((v) => BARS[Math.min(7, Math.floor(((v - lo) / (hi - lo)) * 8))]).join('');
}

export interface FindingJson {
  kind: Finding['kind'];
  host: string;
  gpu: number | null;
  pid: number | null;
  user: string | null;
  slopeMiBPerHour: number;
  hoursToFull: number | null;
  rule: string;
  /** How a GPU creep grows (steady | validation_steps | despite_empty_cache), null for other findings. */
  pattern: CreepPattern | null;
  /** The first fix, chosen by the rule's conditions on that pattern. */
  fix: string | null;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/** The CLI contract: worst first (the detector's order is by severity; kept stable here). */
export function findingsJson(findings: Finding[], rules?: RuleBase): { findings: FindingJson[] } {
  return {
    findings: sortWorstFirst(findings).map((f) => ({
      kind: f.kind,
      host: f.host,
      gpu: f.gpu ?? null,
      pid: f.pid ?? null,
      user: f.user ?? null,
      slopeMiBPerHour: round1(f.slopeMiBPerHour),
      hoursToFull: f.hoursToFull === null ? null : round1(f.hoursToFull),
      rule: f.rule,
      pattern: f.pattern ?? null,
      fix: fixSummary(f.rule, rules, f.pattern) ?? null,
    })),
  };
}

export const sortWorstFirst = (findings: Finding[]): Finding[] =>
  [...findings].sort((a, b) => b.severity - a.severity || (a.hoursToFull ?? Infinity) - (b.hoursToFull ?? Infinity));

const KIND_LABEL: Record<Finding['kind'], MessageKey> = {
  leak: 'digest.kind.leak',
  rank0_growth: 'digest.kind.rank0',
  host_ram: 'digest.kind.hostRam',
  idle_held: 'digest.kind.idleHeld',
};

export function formatHours(h: number | null): string {
  if (h === null || !Number.isFinite(h)) return '—';
  if (h < 1) return `${Math.max(1, Math.round(h * 60))} min`;
  if (h < 48) return `${round1(h)} h`;
  return `${round1(h / 24)} d`;
}

const fmtMiB = (m: number) => (m >= 10240 ? `${round1(m / 1024)} GiB` : `${Math.round(m)} MiB`);

export interface Watched {
  hosts: number;
  processes: number;
}

/**
 * Who the findings' unix users are: with `owners`, a digest names the person ("Alice (alice)") where a
 * mapping exists. `link`: a platform mention that may notify them (Slack), for channels that opted in
 * to owner messages (dm_owners); otherwise the plain name, so a digest pings no one.
 */
export interface DigestPeople {
  owners?: Pick<OwnersService, 'lookup'>;
  link?: boolean;
}

/** The digest reply: one section per host + owner, worst group first, worst finding first within. */
export function digestReply(
  findings: Finding[],
  watched: Watched,
  rules?: RuleBase,
  titleGiven?: string,
  chartOf?: ChartOf,
  people: DigestPeople = {},
  loc?: Locale,
): Reply {
  const title = titleGiven ?? t(loc, 'digest.title');
  const what = `${t(loc, watched.hosts === 1 ? 'digest.hosts.one' : 'digest.hosts', { n: watched.hosts })}, ${t(loc, watched.processes === 1 ? 'digest.processes.one' : 'digest.processes', { n: watched.processes })}`;
  if (!findings.length) {
    return { title, severity: 'ok', sections: [{ text: t(loc, 'digest.none', { what }) }] };
  }
  const sorted = sortWorstFirst(findings);
  const groups = new Map<string, Finding[]>();
  for (const f of sorted) {
    const key = `${f.host}\u0000${f.user ?? ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(f);
  }
  const sections: ReplySection[] = [];
  const mentions = new Mentions();
  for (const g of groups.values()) {
    const { host, user } = g[0];
    const who = personOf(mentions, people.owners, host, user, people.link);
    const rows = g.map((f) => [
      t(loc, KIND_LABEL[f.kind]),
      f.gpu === undefined ? '—' : String(f.gpu),
      f.pid === undefined ? '—' : String(f.pid),
      who ?? '—',
      (f.command ?? '').slice(0, 60) || '—',
      f.kind === 'idle_held' ? '0' : String(round1(f.slopeMiBPerHour)),
      `${fmtMiB(f.currentMiB)} / ${fmtMiB(f.totalMiB)}`,
      formatHours(f.hoursToFull),
      sparkline(f.series),
    ]);
    const fixes = [...new Set(g.map((f) => fixSummary(f.rule, rules, f.pattern, loc)).filter((x): x is string => !!x))];
    const details = g.map((f) => findingDetail(f, loc)).filter((x): x is string => !!x);
    sections.push({
      heading: `${host}${who ? ` · ${who}` : ''}`,
      table: {
        columns: [
          t(loc, 'digest.col.finding'),
          'GPU',
          'pid',
          t(loc, 'digest.col.user'),
          t(loc, 'digest.col.command'),
          'MiB/h',
          t(loc, 'digest.col.current'),
          t(loc, 'digest.col.fullIn'),
          t(loc, 'digest.col.series'),
        ],
        rows,
      },
      ...(details.length || fixes.length ? { text: [...details, ...fixes.map((x) => t(loc, 'digest.fix', { fix: x }))].join('\n') } : {}),
    });
  }
  const worst = sorted[0];
  const severity =
    worst.severity >= 40 && worst.kind !== 'idle_held' ? (worst.hoursToFull !== null && worst.hoursToFull < 12 ? 'error' : 'warning') : 'warning';
  // A chart of the worst growing finding, attached as a PNG, where its samples are at hand.
  const charted = chartOf && sorted.find((f) => f.kind !== 'idle_held' && f.series.length >= 2);
  const chart = charted ? chartOf(charted) : undefined;
  const files = chart ? [chart] : undefined;
  return {
    title,
    severity,
    sections: [{ text: t(loc, findings.length === 1 ? 'digest.count.one' : 'digest.count', { n: findings.length, what }) }, ...sections],
    ...(files ? { files } : {}),
    ...(mentions.size ? { mentions: mentions.table() } : {}),
  };
}

// ---- dedup: a finding already reported is repeated only if it got worse ----

export interface ReportedState {
  slopeMiBPerHour: number;
  hoursToFull: number | null;
  reportedAt: number;
}

export const findingKey = (f: Finding): string => `${f.kind}|${f.host}|${f.gpu ?? ''}|${f.pid ?? ''}|${f.user ?? ''}`;

/** True when f is worse than what was reported: slope +25% or time to full halved. */
export function gotWorse(f: Finding, prev: ReportedState): boolean {
  if (f.slopeMiBPerHour > prev.slopeMiBPerHour * 1.25 + 1e-9 && f.slopeMiBPerHour > 0) return true;
  if (f.hoursToFull !== null && prev.hoursToFull !== null && f.hoursToFull <= prev.hoursToFull / 2) return true;
  if (f.hoursToFull !== null && prev.hoursToFull === null && f.kind !== 'idle_held') return true;
  return false;
}

/** Splits findings into those to post (new or worse) and returns the updated reported state. */
export function dedupFindings(findings: Finding[], reported: Map<string, ReportedState>, now: number): { post: Finding[]; update: Map<string, ReportedState> } {
  const post: Finding[] = [];
  const update = new Map<string, ReportedState>();
  for (const f of findings) {
    const key = findingKey(f);
    const prev = reported.get(key);
    if (!prev || gotWorse(f, prev)) {
      post.push(f);
      update.set(key, { slopeMiBPerHour: f.slopeMiBPerHour, hoursToFull: f.hoursToFull, reportedAt: now });
    }
  }
  return { post, update };
}
