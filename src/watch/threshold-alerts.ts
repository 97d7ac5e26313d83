// Threshold alerts: the two rules a team without Alertmanager asks for first, on the samples the watch
// already takes (each round's, as they go to the store):
//   - idle holder: a GPU holding more than `min_gib` of memory at `max_util_pct` utilisation or less
//     (0% by default) for longer than `minutes`: memory someone holds and nobody uses;
//   - card full: a GPU over `pct` % of its memory for longer than `minutes`: the next allocation on it fails.
// Each is posted once per episode (the condition holding without a break) to the watch's channels, and
// to the owners of the processes on the GPU where a channel has dm_owners; not again until it clears.
// A gap in the samples longer than three intervals is a break (what happened meanwhile is unknown), a
// sample whose utilisation is not reported neither extends nor breaks an idle episode.
// Episodes live in memory; which were posted is kept with the watch's state (ThresholdEpisodes,
// src/watch/state.ts): after a restart, or on a replica that takes the host over, an episode posted
// before is not posted again while its condition holds. A restart is no gap for a posted episode (the
// record says it was posted and no reading since said it ended); the first reading that does clears it.
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
import type { PostedEpisode } from './state.js';
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
  sinceMs: number;
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

type EpisodeOf = Pick<PostedEpisode, 'host' | 'gpu' | 'rule'>;

export class ThresholdWatch {
  private episodes = new Map<string, Episode>();
  /** Episodes posted before this process saw them (a restart, another replica): key -> since. */
  private postedBefore = new Map<string, number>();
  /** Posted episodes dropped unseen (the host is down, or another replica samples it now): a reading after the gap ends them. */
  private droppedPosted = new Map<string, EpisodeOf>();
  /** Where a reading showed the condition ended and a posted record may remain: to clear in the store. */
  private ended = new Map<string, EpisodeOf>();
  /** Keys cleared (or never posted) since their condition last held: a further ending reading clears nothing more. */
  private clearedKeys = new Set<string>();

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

  /** Episodes posted before (the store's record): each still counts as posted while its condition holds. */
  resume(posted: readonly PostedEpisode[]): void {
    for (const p of posted) {
      const key = `${p.rule}|${p.host}|${p.gpu}`;
      const ep = this.episodes.get(key);
      if (ep) ep.posted = true;
      else this.postedBefore.set(key, p.sinceMs);
      this.clearedKeys.delete(key);
    }
  }

  /** Episodes whose condition ended since the last call: their posted records are to be cleared. */
  takeEnded(): EpisodeOf[] {
    const out = [...this.ended.values()];
    this.ended.clear();
    return out;
  }

  /** Ended episodes whose records could not be cleared: tried again with the next ones. */
  endedAgain(ended: readonly EpisodeOf[]): void {
    for (const e of ended) {
      const key = `${e.rule}|${e.host}|${e.gpu}`;
      if (!this.episodes.has(key) && !this.ended.has(key)) this.ended.set(key, e);
    }
  }

  /** The condition ended here: the store's record of a post (this process's, or another's) is cleared once. */
  private end(key: string, of: EpisodeOf): void {
    this.episodes.delete(key);
    this.postedBefore.delete(key);
    this.droppedPosted.delete(key);
    if (this.clearedKeys.has(key)) return;
    this.clearedKeys.add(key);
    this.ended.set(key, of);
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
    const of = { host: r.host, gpu: r.gpu, rule };
    let ep = this.episodes.get(key);
    if (ep && r.ms <= ep.seenMs) return; // a repeated or late reading
    if ((ep && r.ms - ep.seenMs > this.maxGapMs) || (!ep && this.droppedPosted.has(key))) {
      this.end(key, of);
      ep = undefined;
    }
    if (holds === false) {
      this.end(key, of);
      return;
    }
    if (holds === null) {
      if (ep) ep.seenMs = r.ms;
      return;
    }
    this.clearedKeys.delete(key);
    const before = this.postedBefore.get(key);
    this.postedBefore.delete(key);
    if (!ep)
      this.episodes.set(
        key,
        (ep = {
          key,
          rule,
          host: r.host,
          gpu: r.gpu,
          sinceMs: before ?? r.ms,
          lastMs: r.ms,
          seenMs: r.ms,
          posted: before !== undefined,
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
        if (ep.posted) this.droppedPosted.set(key, { host: ep.host, gpu: ep.gpu, rule: ep.rule });
        continue;
      }
      const minutes = ep.rule === 'idle_held' ? this.config.idle_held?.minutes : this.config.card_full?.minutes;
      if (ep.posted || minutes === undefined || ep.lastMs - ep.sinceMs < minutes * MIN || silenced(ep.host, ep.gpu)) continue;
      ep.posted = true;
      const { rule, host, gpu, usedMiB, totalMiB, utilPct, procs } = ep;
      out.push({ key, rule, host, gpu, sinceMs: ep.sinceMs, minutes: (ep.lastMs - ep.sinceMs) / MIN, usedMiB, totalMiB, utilPct, procs });
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
