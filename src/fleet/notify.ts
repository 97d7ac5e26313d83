// `/gpu notify`: subscriptions kept behind fleet's port (subscriptions.ts), checked after every sampler round against the
// same ranking as `/gpu fit`. Each subscription sends exactly one direct message, when a fit appears
// (with the line to start it) or when it expires, and is closed by that; closing comes before sending,
// guarded in SQL, so a restart or an overlapping check never sends a second one.
import { isServerPlatform } from '../core/platform.js';
import { recipientLocale, t } from '../core/i18n.js';
import { message, type Message } from '../core/message.js';
import type { Reply } from '../core/reply.js';
import type { FitConfig, HostStatusResult, HostsService, NotifyService, NotifySubscription, PostTarget } from '../core/services.js';
import type { SubscriptionRow, SubscriptionStorage } from './subscriptions.js';
import { formatMiB, MAX_HOURS } from './args.js';
import { rankFits, sshHint, type FitResult, type GpuGrowth } from './fit.js';
import { holdersText, requestText, startLines } from './render.js';

const HOUR = 3_600_000;

export type DirectPoster = (target: PostTarget, reply: Reply) => Promise<void>;

/** The asker's own processes never make a GPU "someone else's": known only where the chat user is the unix user. */
export function ownUsersOf(platform: string, userId: string): string[] {
  return platform === 'console' || platform === 'cli' ? [userId] : [];
}

const view = (r: SubscriptionRow): NotifySubscription => ({
  id: r.id,
  sizeMiB: r.sizeMiB,
  size: r.size,
  count: r.count,
  shared: r.shared,
  createdMs: r.createdMs,
  expiresMs: r.expiresMs,
});

export class Notifier implements NotifyService {
  private post: DirectPoster | null = null;

  constructor(
    private store: SubscriptionStorage,
    private settings: FitConfig,
    private hosts: HostsService | undefined,
    /** The leak watch's growth rates; a failure counts as none known. */
    private growth: (now: number) => Promise<GpuGrowth[]>,
    private onError: (e: unknown) => void = () => {},
  ) {}

  /** Set once a chat adapter (or the console) can deliver; until then rounds check nothing, so no message is lost. */
  setPoster(post: DirectPoster): void {
    this.post = post;
  }

  async subscribe(
    req: { platform: string; userId: string; sizeMiB: number; size: string; count: number; shared: boolean; hours: number },
    now = Date.now(),
  ): Promise<{ ok: true; subscription: NotifySubscription } | { ok: false; reason: Message; open: NotifySubscription[] }> {
    const owner = { platform: req.platform, userId: req.userId };
    const open = await this.store.openSubscriptions(owner);
    if (open.length >= this.settings.maxNotifyPerUser)
      return {
        ok: false,
        // A catalogue message: the command renders it in the asker's language.
        reason: message('reason.notify.tooMany', { n: open.length, max: this.settings.maxNotifyPerUser }),
        open: open.map(view),
      };
    const hours = Math.min(Math.max(req.hours, 1), MAX_HOURS);
    const row = await this.store.addSubscription({
      ...owner,
      sizeMiB: req.sizeMiB,
      size: req.size,
      count: req.count,
      shared: req.shared,
      createdMs: now,
      expiresMs: now + hours * HOUR,
    });
    return { ok: true, subscription: view(row) };
  }

  async list(platform: string, userId: string): Promise<NotifySubscription[]> {
    return (await this.store.openSubscriptions({ platform, userId })).map(view);
  }

  async cancel(platform: string, userId: string, id: number): Promise<boolean> {
    return this.store.closeSubscription(id, 'cancelled', Date.now(), null, { platform, userId });
  }

  /**
   * After a sampler round: every open subscription against this round's readings. Returns the ids that
   * got their fit message and those that expired.
   */
  async afterRound(status: readonly HostStatusResult[], now = Date.now()): Promise<{ notified: number[]; expired: number[] }> {
    const done = { notified: [] as number[], expired: [] as number[] };
    const post = this.post;
    if (!post) return done;
    const open = await this.store.openSubscriptions();
    if (!open.length) return done;
    const growth = await this.growth(now).catch((e: unknown) => {
      this.onError(e);
      return [] as GpuGrowth[];
    });
    const targets = new Map(((await this.hosts?.list().catch(() => [])) ?? []).map((h) => [h.name, sshHint(h.target)]));
    const sshOf = (host: string) => targets.get(host) ?? null;
    for (const s of open) {
      const result = rankFits(
        status,
        { sizeMiB: s.sizeMiB, count: s.count, hours: 1, shared: s.shared, ownUsers: ownUsersOf(s.platform, s.userId) },
        this.settings,
        growth,
        sshOf,
      );
      const best = result.fits[0];
      if (best) {
        // Closed first: a crash or a failed send after this never leads to a second message.
        if (!(await this.store.closeSubscription(s.id, 'notified', now, `${best.host} ${best.env}`))) continue;
        done.notified.push(s.id);
        await this.send(post, s, fitMessage(s, result));
      } else if (now >= s.expiresMs) {
        if (!(await this.store.closeSubscription(s.id, 'expired', now))) continue;
        done.expired.push(s.id);
        await this.send(post, s, expiredMessage(s, result));
      }
    }
    return done;
  }

  private async send(post: DirectPoster, s: SubscriptionRow, reply: Reply): Promise<void> {
    const platform = isServerPlatform(s.platform) ? s.platform : 'console';
    try {
      await post({ platform, channel: s.userId, name: `notify #${s.id}`, kind: 'dm' }, reply);
    } catch (e) {
      await Promise.resolve(this.store.noteSubscription(s.id, `message not sent: ${(e as Error).message ?? String(e)}`)).catch(() => undefined);
      this.onError(e);
    }
  }
}

/** The direct message when it fits, in the subscriber's language where it was seen, else the config's default. */
function fitMessage(s: SubscriptionRow, result: FitResult): Reply {
  const loc = recipientLocale(s.platform, s.userId);
  const best = result.fits[0];
  const gpus = best.gpus
    .map((g) =>
      t(loc, 'notify.dm.gpu', {
        gpu: g.index,
        usable: formatMiB(g.usableMiB),
        total: formatMiB(g.totalMiB),
        shared: g.holders.length ? t(loc, 'notify.dm.sharedWith', { holders: holdersText(g.holders, loc) }) : '',
      }),
    )
    .join('\n');
  const line = `/gpu fit ${s.size}${s.count > 1 ? ` ${s.count}` : ''}`;
  return {
    title: t(loc, 'notify.dm.fits', { what: requestText(result.request, s.size, loc), host: best.host, gpus: best.gpus.map((g) => g.index).join(',') }),
    severity: 'ok',
    sections: [
      { heading: t(loc, 'fit.col.start'), code: startLines(best, loc) },
      { text: gpus },
      ...(result.fits.length > 1 ? [{ text: t(loc, 'notify.dm.others', { n: result.fits.length - 1, line }) }] : []),
    ],
    footer: t(loc, 'notify.dm.done', { id: s.id }),
  };
}

function expiredMessage(s: SubscriptionRow, result: FitResult): Reply {
  const loc = recipientLocale(s.platform, s.userId);
  const c = result.closest;
  const hours = Math.round((s.expiresMs - s.createdMs) / HOUR);
  return {
    title: t(loc, 'notify.dm.expiredTitle', { what: requestText(result.request, s.size, loc), hours }),
    severity: 'info',
    sections: [
      {
        text: c
          ? t(loc, 'notify.dm.closest', {
              host: c.host,
              gpus: c.gpus.map((g) => g.index).join(','),
              usable: formatMiB(Math.max(0, c.minUsableMiB)),
              holders: holdersText(
                c.gpus.flatMap((g) => g.holders),
                loc,
              ),
            })
          : t(loc, 'notify.dm.noAnswer'),
      },
    ],
    footer: t(loc, 'notify.dm.expired', { id: s.id, line: `/gpu notify ${s.size}${s.count > 1 ? ` ${s.count}` : ''}` }),
  };
}
