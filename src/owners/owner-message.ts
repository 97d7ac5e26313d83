// Owner messages: where a digest opts in (`dm_owners: true`), each finding it reports (new, or worse than
// when it was last reported: the digest's own dedup) also goes to its owner as a direct message, with
// the chart and the fix. One message per finding per digest run; the digest has already recorded the
// finding as reported before anything is sent, so a crash or a failed send never leads to a second one.
import type { Reply } from '../core/reply.js';
import type { PostTarget } from '../core/services.js';
import type { RuleBase } from '../diagnose/rule-base.js';
import { digestReply, formatHours, type ChartOf, type Watched } from '../watch/digest.js';
import type { Finding } from '../watch/types.js';
import type { Owner, OwnersService } from './directory.js';

interface DigestRef {
  name: string;
  platform: 'slack' | 'discord' | 'console';
  channel: string;
}

const WHAT: Record<Finding['kind'], string> = {
  leak: 'is growing GPU memory',
  rank0_growth: 'has one rank growing GPU memory',
  host_ram: 'is filling host RAM',
  idle_held: 'holds GPU memory while the GPU is idle',
};

/** The message for one finding: the digest's own table row, detail, fix and chart, addressed to its owner. */
export function ownerMessage(f: Finding, owner: Owner, digest: DigestRef, watched: Watched, rules?: RuleBase, chartOf?: ChartOf): Reply {
  const where = `${f.host}${f.gpu === undefined ? '' : ` GPU ${f.gpu}`}`;
  const proc = f.pid === undefined ? 'Your job' : `Your process ${f.pid}`;
  const growth =
    f.kind === 'idle_held' ? '' : ` (${Math.round(f.slopeMiBPerHour)} MiB/h${f.hoursToFull === null ? '' : `, full in ${formatHours(f.hoursToFull)}`})`;
  const title = `${proc} on ${where} ${WHAT[f.kind]}${growth}`;
  const r = digestReply([f], watched, rules, title, chartOf, { owners: { lookup: () => owner } });
  r.sections[0] = { text: `The leak watch found this on ${f.host} for ${f.user ?? 'your job'}${f.command ? `: ${f.command.slice(0, 120)}` : ''}.` };
  // The digest charts growth only; the owner gets idle held memory drawn too, where its samples are at hand.
  if (!r.files?.length && chartOf && f.series.length >= 2) {
    const chart = chartOf(f);
    if (chart) r.files = [chart];
  }
  r.footer = `From the leak digest "${digest.name}", whose channel asked for owner messages. One message per finding; another only if it gets worse.`;
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
        ownerMessage(f, owner, digest, watched, rules, chartOf),
      );
      sent++;
    } catch (e) {
      onError(e);
    }
  }
  return sent;
}
