// Threshold alerts: the two rules a team without Alertmanager asks for first, on the samples the watch
// already takes (each round's, as they go to the store):
//   - idle holder: a GPU holding more than `min_gib` of memory at `max_util_pct` utilisation or less
//     (0% by default) for longer than `minutes`: memory someone holds and nobody uses;
//   - card full: a GPU over `pct` % of its memory for longer than `minutes`: the next allocation on it fails.
// Each is posted once per episode (the condition holding without a break) to the watch's channels, and
// to the owners of the processes on the GPU where a channel has dm_owners; not again until it clears.
// A gap in the samples longer than three intervals is a break (what happened meanwhile is unknown), a
// sample whose utilisation is not reported neither extends nor breaks an idle episode.
// Episodes live in memory: after a restart a condition must hold for `minutes` again before it is posted.
// A silenced host or GPU (`/gpu silence`) gets nothing while the silence lasts; an episode still going
// when it ends is posted then (as Alertmanager does).
import { channelLocale, recipientLocale, t, type Locale } from '../core/i18n.js';
import { Mentions } from '../core/mention.js';
import type { Reply } from '../core/reply.js';
import type { PostTarget } from '../core/services.js';
import type { OwnersService } from '../owners/directory.js';
import { personOf } from '../owners/directory.js';
import type { EarlyChannel } from './early-alert.js';
import { toMs } from './series.js';
import { isHostSample, isProcessSample, type Sample } from './types.js';

const MIN = 60_000;

/** `watch.alerts` in the config: each rule off where absent. */
export interface ThresholdConfig {
  idle_held?: { min_gib: number; max_util_pct: number; minutes: number };
  card_full?: { pct: number; minutes: number };
}

export type ThresholdRule = 'idle_held' | 'card_full';

interface HolderProcess {
  pid: number;
  user: string;
  command: string;
  mib: number | null;
}

interface Episode {
  key: string;
  rule: ThresholdRule;
  host: string;
  gpu: number;
  sinceMs: number;
  /** The latest reading where the condition held: the episode has lasted lastMs - sinceMs. */
  lastMs: number;
  /** The latest reading of this GPU (with an unknown utilisation too): gaps are counted from it. */
  seenMs: number;
  posted: boolean;
  usedMiB: number;
  totalMiB: number;
  utilPct: number | null;
  procs: HolderProcess[];
}

/** An episode that has held for its rule's minutes, not posted yet. */
export interface ThresholdAlert {
  key: string;
  rule: ThresholdRule;
  host: string;
  gpu: number;
  /** Minutes the condition has held (first to latest sample). */
  minutes: number;
  usedMiB: number;
  totalMiB: number;
  utilPct: number | null;
  procs: HolderProcess[];
}

/** One GPU at one poll: the card and the processes on it. */
interface GpuReading {
  host: string;
  gpu: number;
  ms: number;
  usedMiB: number;
  totalMiB: number;
  utilPct: number | null;
  procs: HolderProcess[];
}

export class ThresholdWatch {
  private episodes = new Map<string, Episode>();

  constructor(
    readonly config: ThresholdConfig,
    /** No sample for longer than this breaks an episode (three sampling intervals). */
    private maxGapMs: number,
  ) {}

  get enabled(): boolean {
    return !!(this.config.idle_held || this.config.card_full);
  }

  get size(): number {
    return this.episodes.size;
  }

  /** One round's samples (a process sample carries its GPU's reading; a GPU without processes has its own). */
  add(samples: Iterable<Sample>): void {
    if (!this.enabled) return;
    const readings = new Map<string, GpuReading>();
    for (const s of samples) {
      if (isHostSample(s)) continue;
      const ms = toMs(s.ts);
      if (!Number.isFinite(ms) || !(s.gpuTotalMiB > 0)) continue;
      const key = `${s.host}|${s.gpu}|${ms}`;
      let r = readings.get(key);
      if (!r) readings.set(key, (r = { host: s.host, gpu: s.gpu, ms, usedMiB: s.gpuUsedMiB, totalMiB: s.gpuTotalMiB, utilPct: s.utilizationPct, procs: [] }));
      if (isProcessSample(s)) r.procs.push({ pid: s.pid, user: s.user, command: s.command, mib: s.processMiB });
    }
    for (const r of [...readings.values()].sort((a, b) => a.ms - b.ms)) {
      const idle = this.config.idle_held;
      if (idle) this.step('idle_held', r, r.utilPct === null ? null : r.usedMiB > idle.min_gib * 1024 && r.utilPct <= idle.max_util_pct);
      const full = this.config.card_full;
      if (full) this.step('card_full', r, (100 * r.usedMiB) / r.totalMiB > full.pct);
    }
  }

  /** The condition at this reading: true extends (or starts) the episode, false ends it, null (unknown) leaves it. */
  private step(rule: ThresholdRule, r: GpuReading, holds: boolean | null): void {
    const key = `${rule}|${r.host}|${r.gpu}`;
    let ep = this.episodes.get(key);
    if (ep && r.ms <= ep.seenMs) return; // a repeated or late reading
    if (ep && r.ms - ep.seenMs > this.maxGapMs) {
      this.episodes.delete(key);
      ep = undefined;
    }
    if (holds === false) {
      this.episodes.delete(key);
      return;
    }
    if (holds === null) {
      if (ep) ep.seenMs = r.ms;
      return;
    }
    if (!ep)
      this.episodes.set(
        key,
        (ep = {
          key,
          rule,
          host: r.host,
          gpu: r.gpu,
          sinceMs: r.ms,
          lastMs: r.ms,
          seenMs: r.ms,
          posted: false,
          usedMiB: 0,
          totalMiB: 0,
          utilPct: null,
          procs: [],
        }),
      );
    ep.lastMs = r.ms;
    ep.seenMs = r.ms;
    ep.usedMiB = r.usedMiB;
    ep.totalMiB = r.totalMiB;
    ep.utilPct = r.utilPct;
    ep.procs = r.procs;
  }

  /**
   * Episodes that have held for their rule's minutes and were not posted, except on silenced GPUs (those
   * stay due: posted once the silence ends, if still going). Returned ones count as posted from now on
   * (a failed post is not retried into a second). Episodes not seen for the gap are dropped.
   */
  due(nowMs: number, silenced: (host: string, gpu: number) => boolean = () => false): ThresholdAlert[] {
    const out: ThresholdAlert[] = [];
    for (const [key, ep] of this.episodes) {
      if (nowMs - ep.seenMs > this.maxGapMs) {
        this.episodes.delete(key);
        continue;
      }
      const minutes = ep.rule === 'idle_held' ? this.config.idle_held?.minutes : this.config.card_full?.minutes;
      if (ep.posted || minutes === undefined || ep.lastMs - ep.sinceMs < minutes * MIN || silenced(ep.host, ep.gpu)) continue;
      ep.posted = true;
      const { rule, host, gpu, usedMiB, totalMiB, utilPct, procs } = ep;
      out.push({ key, rule, host, gpu, minutes: (ep.lastMs - ep.sinceMs) / MIN, usedMiB, totalMiB, utilPct, procs });
    }
    return out;
  }
}

const gib = (mib: number): string => (mib / 1024).toFixed(1);

function durationText(min: number): string {
  return min < 90 ? `${Math.round(min)} min` : `${Math.round(min / 6) / 10} h`;
}

/** The post for one alert, in `loc`: what holds, for how long, the processes on the GPU, and how to silence it. */
export function thresholdReply(a: ThresholdAlert, owners: Pick<OwnersService, 'lookup'> | undefined, link: boolean, loc: Locale | undefined): Reply {
  const people = new Mentions();
  const vars = {
    host: a.host,
    gpu: a.gpu,
    used: gib(a.usedMiB),
    total: gib(a.totalMiB),
    pct: Math.round((100 * a.usedMiB) / a.totalMiB),
    util: a.utilPct ?? '?',
    duration: durationText(a.minutes),
  };
  const rows = a.procs.map((p) => [
    String(p.pid),
    personOf(people, owners, a.host, p.user, link) ?? p.user,
    p.mib === null ? '?' : gib(p.mib),
    p.command.slice(0, 60),
  ]);
  return {
    title: a.rule === 'idle_held' ? t(loc, 'threshold.idle.title', vars) : t(loc, 'threshold.full.title', vars),
    severity: a.rule === 'card_full' ? 'error' : 'warning',
    sections: [
      { text: a.rule === 'idle_held' ? t(loc, 'threshold.idle.text', vars) : t(loc, 'threshold.full.text', vars) },
      rows.length
        ? {
            table: {
              columns: [t(loc, 'threshold.col.pid'), t(loc, 'threshold.col.user'), t(loc, 'threshold.col.gib'), t(loc, 'threshold.col.command')],
              rows,
            },
          }
        : { text: t(loc, 'threshold.noProcesses') },
    ],
    footer: t(loc, 'threshold.footer', { host: a.host, gpu: a.gpu }),
    ...(people.size ? { mentions: people.table() } : {}),
  };
}

export interface ThresholdPostDeps {
  channels: readonly EarlyChannel[];
  post: (target: PostTarget, reply: Reply) => Promise<void>;
  owners?: Pick<OwnersService, 'lookup'>;
  onError?: (e: unknown) => void;
}

/**
 * Posts each alert to every watch channel, and to the owners of its processes where a channel has
 * dm_owners (one message per owner and alert, however many channels ask). Returns how many posts went out.
 */
export async function postThresholdAlerts(alerts: readonly ThresholdAlert[], deps: ThresholdPostDeps): Promise<number> {
  const onError = deps.onError ?? (() => {});
  const messaged = new Set<string>();
  let sent = 0;
  for (const a of alerts) {
    for (const ch of deps.channels) {
      const link = ch.dm_owners === true;
      try {
        await deps.post(
          { platform: ch.platform, channel: ch.channel, name: `threshold alert to ${ch.name}` },
          thresholdReply(a, deps.owners, link, channelLocale(ch.channel)),
        );
        sent++;
      } catch (e) {
        onError(e);
      }
      if (!link || !deps.owners) continue;
      for (const user of new Set(a.procs.map((p) => p.user))) {
        const owner = deps.owners.lookup(a.host, user);
        const to = owner ? (ch.platform === 'console' ? owner.unixUser : owner[ch.platform]) : undefined;
        if (!owner || !to || messaged.has(`${ch.platform}|${to}|${a.key}`)) continue;
        messaged.add(`${ch.platform}|${to}|${a.key}`);
        try {
          await deps.post(
            { platform: ch.platform, channel: to, name: `threshold alert owner message from ${ch.name}`, kind: 'dm' },
            thresholdReply(a, deps.owners, false, recipientLocale(ch.platform, to)),
          );
          sent++;
        } catch (e) {
          onError(e);
        }
      }
    }
  }
  return sent;
}
