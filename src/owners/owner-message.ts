// Owner messages: where a digest opts in (`dm_owners: true`), each finding it reports (new, or worse than
// when it was last reported: the digest's own dedup) also goes to its owner as a direct message, with
// the chart and the fix. One message per finding per digest run; the digest has already recorded the
// finding as reported before anything is sent, so a crash or a failed send never leads to a second one.
import { recipientLocale, t, type Locale, type MessageKey } from '../core/i18n.js';
import type { Reply } from '../core/reply.js';
import type { PostTarget } from '../core/services.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import { digestReply, formatHours, type ChartOf, type Watched } from '../watch/digest.js';
import type { Finding } from '../watch/types.js';
import type { ChatPlatform } from '../core/platform.js';
import type { Owner, OwnersService } from './directory.js';

interface DigestRef {
  name: string;
  platform: ChatPlatform;
  channel: string;
}

const WHAT: Record<Finding['kind'], MessageKey> = {
  leak: 'owner.what.leak',
  rank0_growth: 'owner.what.rank0',
  host_ram: 'owner.what.hostRam',
  idle_held: 'owner.what.idleHeld',
};

/** The message for one finding: the digest's own table row, detail, fix and chart, addressed to its owner (in `loc`). */
export function ownerMessage(f: Finding, owner: Owner, digest: DigestRef, watched: Watched, rules?: RuleBase, chartOf?: ChartOf, loc?: Locale): Reply {
  const where = `${f.host}${f.gpu === undefined ? '' : ` GPU ${f.gpu}`}`;
  const proc = f.pid === undefined ? t(loc, 'owner.proc.job') : t(loc, 'owner.proc.pid', { pid: f.pid });
  const full = f.hoursToFull === null ? '' : t(loc, 'owner.full', { when: formatHours(f.hoursToFull) });
  const growth = f.kind === 'idle_held' ? '' : t(loc, 'owner.growth', { rate: Math.round(f.slopeMiBPerHour), full });
  const title = t(loc, 'owner.title', { proc, where, what: t(loc, WHAT[f.kind]), growth });
  const r = digestReply([f], watched, rules, title, chartOf, { owners: { lookup: () => owner } }, loc);
  const command = f.command ? t(loc, 'owner.command', { command: f.command.slice(0, 120) }) : '';
  r.sections[0] = { text: t(loc, 'owner.found', { host: f.host, who: f.user ?? t(loc, 'owner.yourJob'), command }) };
  // The digest charts growth only; the owner gets idle held memory drawn too, where its samples are at hand.
  if (!r.files?.length && chartOf && f.series.length >= 2) {
    const chart = chartOf(f);
    if (chart) r.files = [chart];
  }
  r.footer = t(loc, 'owner.footer', { name: digest.name });
  return r;
}

/**
 * Sends each reported finding to its owner on the digest's platform (Slack: the user id, Discord: the
 * user, console: printed for the unix user). Findings without a mapped owner there are left to the
 * digest. Returns how many messages went out.
 */
export async function messageOwners(
  digest: DigestRef,
  posted: readonly Finding[],
  watched: Watched,
  owners: Pick<OwnersService, 'lookup'>,
  send: (target: PostTarget, reply: Reply) => Promise<void>,
  rules?: RuleBase,
  chartOf?: ChartOf,
  onError: (e: unknown) => void = () => {},
): Promise<number> {
  let sent = 0;
  for (const f of posted) {
    if (!f.user) continue;
    const owner = owners.lookup(f.host, f.user);
    if (!owner) continue;
    const to = digest.platform === 'console' ? owner.unixUser : owner[digest.platform];
    if (!to) continue;
    try {
      await send(
        { platform: digest.platform, channel: to, name: `owner message from digest ${digest.name}`, kind: 'dm' },
        // In the owner's language where the platform told it, else the config's default.
        ownerMessage(f, owner, digest, watched, rules, chartOf, recipientLocale(digest.platform, to)),
      );
      sent++;
    } catch (e) {
      onError(e);
    }
  }
  return sent;
}
