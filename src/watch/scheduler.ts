// Scheduled digests (croner: cron + time zone per configured digest) with the runs recorded through the
// storage port (src/watch/state.ts): a restart never posts a duplicate, and a digest missed while the bot
// was down posts once on start. One process keeps a log of its last runs; replicas claim each slot.
import type { ChatPlatform } from '../core/platform.js';
import { channelLocale, t } from '../core/i18n.js';
import { Cron } from 'croner';
import type { Reply } from '../core/reply.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import { dedupFindings, digestReply, type ChartOf, type DigestPeople, type ReportedState } from './digest.js';
import { findingsOf, type FindingsResult } from './findings.js';
import type { OwnersService } from '../owners/directory.js';
import { messageOwners } from '../owners/owner-message.js';
import type { PostTarget } from '../core/services.js';
import type { DigestLog, DigestSlots, WatchState } from './state.js';
import type { DetectorOptions, Finding } from './types.js';

export interface DigestConfig {
  name: string;
  platform: ChatPlatform;
  channel: string;
  cron: string;
  timezone: string;
  /** Also message each new or worse finding's owner directly (config `dm_owners`, opt-in per digest). */
  dm_owners?: boolean;
}

/**
 * A post on the digests' clock that is not a leak digest (the weekly feedback list, src/feedback/weekly.ts):
 * its own reply, the same catch-up and the same last-run record (`name` in digest_runs).
 */
export interface ScheduledPost extends DigestConfig {
  compose(now: number): Reply | Promise<Reply>;
}

export type PostDigest = (digest: DigestConfig, reply: Reply) => Promise<void>;
/** What the adapters give the watch: a digest to its channel, or (kind 'dm') a direct message to the user id in `channel`. */
export type PostMessage = (target: PostTarget, reply: Reply) => Promise<void>;

/** Where a digest's findings come from (the detector over the storage port's samples, unless given). */
export type FindingsSource = (options: Partial<DetectorOptions>, now: number) => Promise<FindingsResult>;

/** What a schedule needs of the watch's state: how its runs are recorded, and the findings. */
export type DigestState = Pick<WatchState, 'digestRuns' | 'findingsInput'>;

const findingsSourceOf =
  (state: Pick<WatchState, 'findingsInput'>): FindingsSource =>
  (options, now) =>
    findingsOf(state, options, now);

/** One scheduled digest: new or worse findings only (state in the store), then the last run recorded. */
export async function scheduledDigest(
  store: DigestLog & Pick<WatchState, 'findingsInput'>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  options: Partial<DetectorOptions>,
  now = Date.now(),
  source: FindingsSource = findingsSourceOf(store),
  chartOf?: ChartOf,
  people: DigestPeople = {},
): Promise<Reply> {
  return (await scheduledDigestRun(store, digest, rules, options, now, source, chartOf, people)).reply;
}

/** The same, with the findings it reports (new or worse) and what was watched: the owner messages follow them. */
export async function scheduledDigestRun(
  store: DigestLog & Pick<WatchState, 'findingsInput'>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  options: Partial<DetectorOptions>,
  now = Date.now(),
  source: FindingsSource = findingsSourceOf(store),
  chartOf?: ChartOf,
  people: DigestPeople = {},
): Promise<{ reply: Reply; posted: Finding[]; watched: FindingsResult['watched'] }> {
  const { findings, watched } = await source(options, now);
  const run = digestOf(findings, watched, store.reported(digest.name), digest, rules, now, chartOf, people);
  store.saveReported(digest.name, run.update);
  return run;
}

/** A digest of these findings: the new or worse ones against what was reported, and what to record as reported. */
function digestOf(
  findings: Finding[],
  watched: FindingsResult['watched'],
  reported: Map<string, ReportedState>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  now: number,
  chartOf?: ChartOf,
  people: DigestPeople = {},
): { reply: Reply; posted: Finding[]; watched: FindingsResult['watched']; update: Map<string, ReportedState> } {
  const { post, update } = dedupFindings(findings, reported, now);
  // In the channel's language (the config's locale.channels, else locale.default).
  const loc = channelLocale(digest.channel);
  const reply = digestReply(post, watched, rules, t(loc, 'digest.scheduled.title', { name: digest.name }), chartOf, people, loc);
  if (!post.length && findings.length)
    reply.sections[0].text = t(loc, 'digest.scheduled.noneNew', { n: findings.length, hosts: watched.hosts, processes: watched.processes });
  return { reply, posted: post, watched, update };
}

/** The findings a digest (and, where it messages owners, their messages) will chart: found by composing it once without charts. */
function chartedBy(
  findings: Finding[],
  watched: FindingsResult['watched'],
  reported: Map<string, ReportedState>,
  digest: DigestConfig,
  rules: RuleBase | undefined,
  now: number,
  people: DigestPeople,
): Finding[] {
  const charted: Finding[] = [];
  const dry = digestOf(findings, watched, reported, digest, rules, now, (f) => void charted.push(f), people);
  return digest.dm_owners ? [...charted, ...dry.posted.slice(0, 20)] : charted;
}

/** The slot a digest is due for at `now`: its latest scheduled time (ms), with a quarter second for a timer that fires early. */
export function latestSlot(d: Pick<DigestConfig, 'cron' | 'timezone'>, now: number): number | null {
  const job = new Cron(d.cron, { timezone: d.timezone, paused: true });
  const prev = job.previousRuns(1, new Date(now + 250))[0];
  job.stop();
  return prev ? prev.getTime() : null;
}

export class DigestScheduler {
  private jobs: Cron[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  /**
   * Charts whose samples must be read first (Postgres): given the findings a digest will chart, the chart
   * source for them. Used instead of `charts` when set.
   */
  chartsFor?: (d: DigestConfig, now: number, charted: Finding[]) => Promise<ChartOf | undefined>;
  private inFlight = new Set<string>();
  private posts: ScheduledPost[] = [];
  /** Who the unix users are: digests name them, and `dm_owners` digests message them. */
  owners?: Pick<OwnersService, 'lookup' | 'refresh'>;
  /** Where owner messages go (kind 'dm'); none set: no owner message is sent. */
  sendDirect?: PostMessage;

  constructor(
    private state: DigestState,
    private digests: DigestConfig[],
    private post: PostDigest,
    private rules: RuleBase | undefined,
    private options: Partial<DetectorOptions> = {},
    private onError: (e: unknown) => void = () => {},
    private source: FindingsSource = findingsSourceOf(state),
    /** The chart attached to a digest, drawn in the digest's own time zone. */
    private charts?: (d: DigestConfig, now: number) => ChartOf,
  ) {}

  /** One more schedule, before start(): posted through the same `post`, caught up and recorded like a digest. */
  add(post: ScheduledPost): void {
    this.posts.push(post);
  }

  /** Starts the cron jobs; posts each digest missed while down once. Returns the names caught up. */
  async start(now = Date.now()): Promise<string[]> {
    const runs = this.state.digestRuns;
    if ('slots' in runs) return this.startClaiming(runs.slots, now);
    const log = runs.log;
    const caught: string[] = [];
    for (const d of [...this.digests, ...this.posts]) {
      const last = log.lastRun(d.name);
      if (last === null)
        log.setLastRun(d.name, now); // first start: nothing was missed
      else {
        const due = new Cron(d.cron, { timezone: d.timezone, paused: true }).nextRun(new Date(last));
        if (due && due.getTime() <= now) {
          await this.run(d, now);
          caught.push(d.name);
        }
      }
      this.jobs.push(new Cron(d.cron, { timezone: d.timezone, protect: true }, () => void this.run(d, Date.now())));
    }
    return caught;
  }

  /** Runs one digest unless it already ran for this slot (persisted last run guards duplicates). */
  async run(d: DigestConfig | ScheduledPost, now: number): Promise<boolean> {
    const runs = this.state.digestRuns;
    // Slots claimed among replicas: a run is a sweep (the claim is the guard).
    if ('slots' in runs) return this.sweep(d, now);
    const log = runs.log;
    if (this.inFlight.has(d.name)) return false;
    const last = log.lastRun(d.name);
    if (last !== null && now - last < 30_000) return false;
    this.inFlight.add(d.name);
    try {
      log.setLastRun(d.name, now); // before posting: a crash mid-post never posts twice
      if ('compose' in d) {
        await this.post(d, await d.compose(now));
        return true;
      }
      await this.owners?.refresh?.().catch(() => undefined);
      // Names, not pids; a platform mention (which may notify on Slack) only where the channel opted in to owner messages.
      const people = { owners: this.owners, link: d.dm_owners === true };
      let chartOf = this.charts?.(d, now);
      let run: ReturnType<typeof digestOf>;
      if (this.chartsFor) {
        // Charts drawn first (in a child process), for the findings the digest and its owner messages will show.
        const { findings, watched } = await this.source(this.options, now);
        const reported = log.reported(d.name);
        chartOf = await this.chartsFor(d, now, chartedBy(findings, watched, reported, d, this.rules, now, people));
        const composed = digestOf(findings, watched, reported, d, this.rules, now, chartOf, people);
        log.saveReported(d.name, composed.update);
        run = composed;
      } else {
        const { findings, watched } = await this.source(this.options, now);
        run = digestOf(findings, watched, log.reported(d.name), d, this.rules, now, chartOf, people);
        log.saveReported(d.name, run.update);
      }
      // The findings are recorded as reported already: a channel that cannot be posted to does not
      // keep their owners from hearing of them.
      const posted = this.post(d, run.reply);
      if (d.dm_owners && this.owners && this.sendDirect) {
        await posted.catch(() => undefined);
        await messageOwners(d, run.posted, run.watched, this.owners, this.sendDirect, this.rules, chartOf, this.onError);
      }
      await posted;
      return true;
    } catch (e) {
      this.onError(e);
      return false;
    } finally {
      this.inFlight.delete(d.name);
    }
  }

  /** start() with slots claimed among replicas: every cron tick, and every third of a claim's life, claims what is due. */
  private async startClaiming(slots: DigestSlots, now: number): Promise<string[]> {
    const all = [...this.digests, ...this.posts];
    for (const d of all) {
      const slot = latestSlot(d, now);
      if (slot !== null) await slots.seed(d.name, slot);
      this.jobs.push(new Cron(d.cron, { timezone: d.timezone, protect: true }, () => void this.sweep(d)));
    }
    const caught: string[] = [];
    for (const d of all) if (await this.sweep(d, now)) caught.push(d.name);
    this.sweeper = setInterval(
      () => {
        for (const d of all) void this.sweep(d);
      },
      Math.max(500, Math.floor(slots.claimTtlMs / 3)),
    );
    this.sweeper.unref();
    return caught;
  }

  /**
   * Posts what this replica can claim of `d`: slots abandoned by a replica that died holding them, then
   * the latest due slot. True when one was posted here. Errors go to onError (a sweep never throws).
   */
  async sweep(d: DigestConfig | ScheduledPost, now = Date.now()): Promise<boolean> {
    const runs = this.state.digestRuns;
    if (!('slots' in runs) || this.inFlight.has(d.name)) return false;
    const slots = runs.slots;
    this.inFlight.add(d.name);
    try {
      let ran = false;
      for (const slot of await slots.abandoned(d.name)) if (await slots.claim(d.name, slot)) ran = (await this.runClaimed(slots, d, slot, Date.now())) || ran;
      const latest = latestSlot(d, now);
      if (latest !== null && (await slots.claim(d.name, latest))) ran = (await this.runClaimed(slots, d, latest, now)) || ran;
      return ran;
    } catch (e) {
      this.onError(e);
      return false;
    } finally {
      this.inFlight.delete(d.name);
    }
  }

  /**
   * Runs a slot this replica claimed: the claim is renewed while the digest is computed, checked once
   * more just before posting (a replica that stalled past its claim leaves the post to the one that took
   * over), and marked posted after. What was reported is saved only after the post, so a replica that
   * dies mid-digest leaves the retry the same findings to report.
   */
  private async runClaimed(slots: DigestSlots, d: DigestConfig | ScheduledPost, slot: number, now: number): Promise<boolean> {
    const renewal = setInterval(() => void slots.renew(d.name, slot).catch((e: unknown) => this.onError(e)), Math.max(200, Math.floor(slots.claimTtlMs / 3)));
    try {
      if ('compose' in d) {
        const reply = await d.compose(now);
        if (!(await slots.renew(d.name, slot))) return false;
        await this.post(d, reply);
        await slots.done(d.name, slot, 'posted');
        return true;
      }
      const { findings, watched } = await this.source(this.options, now);
      const reported = await slots.reported(d.name);
      // Owner names as any replica approved them; a failed read keeps the last ones.
      await this.owners?.refresh?.().catch(() => undefined);
      const people = { owners: this.owners, link: d.dm_owners === true };
      let chartOf = this.charts?.(d, now);
      // Which findings the digest (and the owner messages) will chart, then their charts, then the digest.
      if (this.chartsFor) chartOf = await this.chartsFor(d, now, chartedBy(findings, watched, reported, d, this.rules, now, people));
      const run = digestOf(findings, watched, reported, d, this.rules, now, chartOf, people);
      if (!(await slots.renew(d.name, slot))) return false;
      const posted = this.post(d, run.reply);
      if (d.dm_owners && this.owners && this.sendDirect) {
        await posted.catch(() => undefined);
        await messageOwners(d, run.posted, run.watched, this.owners, this.sendDirect, this.rules, chartOf, this.onError);
      }
      await posted;
      await slots.saveReported(d.name, run.update);
      await slots.done(d.name, slot, 'posted');
      return true;
    } catch (e) {
      // Not retried (as with SQLite): a channel that cannot be posted to would fail again. Only a replica
      // that dies holding the slot leaves it to be taken over.
      await slots.done(d.name, slot, 'failed', (e as Error).message ?? String(e)).catch(() => undefined);
      this.onError(e);
      return false;
    } finally {
      clearInterval(renewal);
    }
  }

  stop(): void {
    for (const j of this.jobs) j.stop();
    this.jobs = [];
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
