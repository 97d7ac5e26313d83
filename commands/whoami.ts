// /gpu whoami [UNIXUSER]: say which unix user on the GPU hosts is you, so status and leak digests name
// you instead of a pid (and, where a channel opts in, message you about your own jobs). A claim waits
// for an admin: `/gpu whoami approve ID` (or `reject ID`); `/gpu whoami pending` lists them.
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/core/command.js';
import { t, type Locale } from '../src/core/i18n.js';
import { issueWith, message, render, type Message } from '../src/core/message.js';
import { Mentions } from '../src/core/mention.js';
import { textReply, type Reply } from '../src/core/reply.js';
import type { ClaimRow } from '../src/owners/claims.js';
import { parseOwnerKey, type ClaimCheck, type Owner } from '../src/owners/directory.js';
import { OWNER_NAME } from '../src/core/config.js';

const USAGE = 'whoami show|claim UNIXUSER [DISPLAY-NAME]|approve ID|reject ID|pending';
const ADMIN_WORDS = new Set(['approve', 'confirm', 'reject', 'pending']);
const WORDS = new Set(['show', 'claim', ...ADMIN_WORDS]);

type Words =
  | { action: 'show' }
  | { action: 'pending' }
  | { action: 'claim'; key: string; name?: string }
  | { action: 'approve' | 'reject'; id: number }
  | { action: 'approve' | 'reject'; key: string }
  | { error: Message };

/**
 * `whoami`, `whoami alice [Alice Liddell]`, `whoami claim alice@gpu3`, `whoami approve 3`,
 * `whoami reject 3`, `whoami pending`.
 */
export function parseWhoamiWords(words: readonly string[]): Words {
  const [first, second, ...rest] = words;
  if (first === undefined || (first === 'show' && second === undefined)) return { action: 'show' };
  if (first === 'pending' && second === undefined) return { action: 'pending' };
  if (first === 'approve' || first === 'confirm' || first === 'reject') {
    if (second === undefined || rest.length) return { error: message('usage.whoami.oneId', { word: first }) };
    const action = first === 'reject' ? 'reject' : 'approve';
    if (/^\d{1,9}$/.test(second)) return { action, id: Number(second) };
    const k = parseOwnerKey(second);
    return 'error' in k ? { error: message('usage.whoami.idOrUser', { word: first, error: k.error }) } : { action, key: second };
  }
  const claim = (key: string | undefined, name: string[]): Words =>
    key === undefined ? { error: message('usage.whoami.claim') } : { action: 'claim', key, ...(name.length ? { name: name.join(' ') } : {}) };
  if (first === 'claim') return claim(second, rest);
  if (WORDS.has(first)) return { error: message('usage.whoami.usage', { usage: USAGE }) };
  return claim(first, second === undefined ? [] : [second, ...rest]);
}

const asker = (r: Reply): Reply => ({ ...r, visibility: 'asker' });
const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const keyOf = (c: { unixUser: string; host: string | null }) => (c.host ? `${c.unixUser}@${c.host}` : c.unixUser);

/** The chat user behind a claim: "Alice Liddell (alice)"; a Discord mention, a Slack one where `link`. */
function claimant(m: Mentions, c: ClaimRow, loc: Locale | undefined, link = false): string {
  const id = c.userId;
  const who = c.name ?? (c.platform === 'console' ? id : t(loc, 'whoami.platformUser', { platform: c.platform, id }));
  return m.of({
    name: `${who} (${c.unixUser})`,
    after: ` (${c.unixUser})`,
    ...(c.platform === 'slack' ? { slack: id } : c.platform === 'discord' ? { discord: id } : {}),
    ...(link ? { link: true } : {}),
  });
}

/**
 * Who asked, as the platform knows them (never the name they typed): a mention where the platform can show
 * one, and the account id in plain text.
 */
function account(m: Mentions, c: ClaimRow, loc: Locale | undefined): string {
  const id = c.userId;
  const who = m.of({
    name: c.platform === 'console' ? id : t(loc, 'whoami.platformUser', { platform: c.platform, id }),
    ...(c.platform === 'slack' ? { slack: id } : c.platform === 'discord' ? { discord: id } : {}),
    link: true,
  });
  return c.platform === 'console' ? who : t(loc, 'whoami.pending.account', { who, platform: c.platform, id });
}

/** The config's owner of a unix user: their name, with their accounts spelled out. */
function configOwner(m: Mentions, o: Owner): string {
  const accounts = [...(o.slack ? [`slack ${o.slack}`] : []), ...(o.discord ? [`discord ${o.discord}`] : [])];
  const who = m.of({ name: o.name ?? o.unixUser, ...(o.slack ? { slack: o.slack } : {}), ...(o.discord ? { discord: o.discord } : {}) });
  return accounts.length ? `${who} (${accounts.join(', ')})` : who;
}

/** One pending claim for the admin: who asked (account, not the name typed) and how that compares with the config. */
function pendingLine(m: Mentions, c: ClaimRow, check: ClaimCheck, loc: Locale | undefined): string {
  const user = c.unixUser;
  const verdict =
    check.kind === 'matches'
      ? t(loc, 'whoami.check.matches', { user })
      : check.kind === 'none'
        ? t(loc, 'whoami.check.none', { user })
        : t(loc, check.kind === 'differs' ? 'whoami.check.differs' : 'whoami.check.unverified', {
            user,
            owner: configOwner(m, check.owner),
            platform: c.platform,
          }) + (check.sameName ? t(loc, 'whoami.check.sameName') : '');
  return t(loc, 'whoami.pending.line', {
    id: c.id,
    key: keyOf(c),
    who: account(m, c, loc),
    name: c.name ? t(loc, 'whoami.pending.gaveName', { name: c.name }) : '',
    check: verdict,
  });
}

const CHECK_WORD = {
  matches: 'whoami.match.matches',
  differs: 'whoami.match.differs',
  unverified: 'whoami.match.unverified',
  none: 'whoami.match.none',
} as const;

export default defineCommand({
  name: 'whoami',
  summary: t('en', 'cmd.whoami.summary'),
  usage: USAGE,
  options: z
    .object({ _: z.array(z.string().max(100)).max(10) })
    .passthrough()
    .superRefine((o, ctx) => {
      const r = parseWhoamiWords(o._);
      if ('error' in r) ctx.addIssue(issueWith(r.error));
      // A name that cannot be a unix user is a usage error, answered to the asker alone.
      else if (r.action === 'claim') {
        const k = parseOwnerKey(r.key);
        if ('error' in k) ctx.addIssue(issueWith(k.error));
        else if (r.name !== undefined && !OWNER_NAME.test(r.name))
          ctx.addIssue(issueWith(message('usage.whoami.displayName', { name: r.name.replace(/[^\x20-\x7e]/g, '?').slice(0, 40) })));
      }
    }),
  requiresAdmin: (o) => ADMIN_WORDS.has(o._[0] ?? ''),
  run(o, ctx) {
    return whoami(o._, ctx);
  },
});

async function whoami(args: string[], ctx: CommandContext): Promise<Reply> {
  const owners = ctx.services.owners;
  const loc = ctx.locale;
  if (!owners) return asker(textReply('whoami', t(loc, 'whoami.unavailable'), 'info'));
  const words = parseWhoamiWords(args);
  if ('error' in words) return asker(textReply(t(loc, 'registry.usage.title', { usage: USAGE }), render(loc, words.error), 'warning'));
  const pendingHint = t(loc, 'whoami.pendingHint');
  switch (words.action) {
    case 'show':
      return show(ctx);
    case 'pending': {
      const open = await owners.pending();
      if (!open.length) return asker(textReply(t(loc, 'whoami.noClaims.title'), t(loc, 'whoami.noClaims.text'), 'info'));
      const m = new Mentions();
      const checks = open.map((c) => owners.check(c));
      return asker({
        title: t(loc, 'whoami.pending.title', { n: open.length }),
        severity: checks.some((c) => c.kind === 'differs' || c.kind === 'unverified') ? 'warning' : 'info',
        sections: [
          {
            table: {
              columns: [
                t(loc, 'whoami.col.id'),
                t(loc, 'whoami.col.unixUser'),
                t(loc, 'whoami.col.platform'),
                t(loc, 'whoami.col.account'),
                t(loc, 'whoami.col.config'),
                t(loc, 'whoami.col.asked'),
              ],
              rows: open.map((c, i) => [String(c.id), keyOf(c), c.platform, c.userId, t(loc, CHECK_WORD[checks[i].kind]), when(c.createdMs)]),
            },
          },
          { text: open.map((c, i) => pendingLine(m, c, checks[i], loc)).join('\n') },
        ],
        footer: t(loc, 'whoami.pending.footer'),
        mentions: m.table(),
      });
    }
    case 'approve': {
      const id = await claimId(owners, words, loc);
      if (typeof id !== 'number') return id;
      const r = await owners.approve(id, `${ctx.platform}:${ctx.userId}`);
      if (!r) return asker(textReply(t(loc, 'whoami.noClaim.title', { id }), pendingHint, 'warning'));
      const m = new Mentions();
      return {
        title: t(loc, 'whoami.approved.title', { id: r.claim.id, key: keyOf(r.claim) }),
        severity: 'ok',
        sections: [
          {
            text: t(loc, 'whoami.approved.text', {
              key: keyOf(r.claim),
              host: r.claim.host ?? t(loc, 'whoami.everyHost'),
              who: claimant(m, r.claim, loc, true),
              replaces: r.replaced ? t(loc, 'whoami.replaces', { id: r.replaced.id }) : '',
            }),
          },
        ],
        mentions: m.table(),
      };
    }
    case 'reject': {
      const id = await claimId(owners, words, loc);
      if (typeof id !== 'number') return id;
      const r = await owners.reject(id, `${ctx.platform}:${ctx.userId}`);
      return r
        ? asker(textReply(t(loc, 'whoami.rejected.title', { id: r.id }), t(loc, 'whoami.rejected.text', { key: keyOf(r) }), 'ok'))
        : asker(textReply(t(loc, 'whoami.noReject.title', { id }), pendingHint, 'warning'));
    }
    case 'claim': {
      const r = await owners.claim(ctx.platform, ctx.userId, words.key, words.name);
      if (!r.ok) return asker(textReply(t(loc, 'whoami.notClaimed'), render(loc, r.reason), 'warning'));
      const c = r.claim;
      if (c.state === 'active') return asker(textReply(t(loc, 'whoami.already.title', { key: keyOf(c) }), t(loc, 'whoami.already.text', { id: c.id }), 'ok'));
      return {
        title: t(loc, 'whoami.claim.title', {
          id: c.id,
          key: keyOf(c),
          name: c.name ? t(loc, 'whoami.claim.name', { name: c.name }) : '',
          existed: r.existed ? t(loc, 'whoami.claim.existed') : '',
        }),
        severity: 'info',
        sections: [{ text: t(loc, 'whoami.claim.text', { id: c.id }) }],
      };
    }
  }
}

/** The claim an admin means: its ID, or the one claim waiting for a unix user (several: pick by ID). */
async function claimId(
  owners: NonNullable<CommandContext['services']['owners']>,
  w: { id: number } | { key: string },
  loc: Locale | undefined,
): Promise<number | Reply> {
  if ('id' in w) return w.id;
  const waiting = (await owners.pending()).filter((c) => keyOf(c) === w.key);
  if (waiting.length === 1) return waiting[0].id;
  return asker(
    waiting.length
      ? textReply(
          t(loc, 'whoami.several.title', { n: waiting.length, key: w.key }),
          t(loc, 'whoami.several.text', { ids: waiting.map((c) => `#${c.id}`).join(', ') }),
          'warning',
        )
      : textReply(t(loc, 'whoami.noneFor.title', { key: w.key }), t(loc, 'whoami.pendingHint'), 'warning'),
  );
}

async function show(ctx: CommandContext): Promise<Reply> {
  const { config, claims } = await ctx.services.owners!.mine(ctx.platform, ctx.userId);
  const loc = ctx.locale;
  const every = t(loc, 'whoami.everyHost');
  const rows = [
    ...config.map((o) => [keyOf(o), o.host ?? every, t(loc, 'whoami.configFile')]),
    ...claims.map((c) => [keyOf(c), c.host ?? every, t(loc, c.state === 'active' ? 'whoami.approvedRow' : 'whoami.waitingRow', { id: c.id })]),
  ];
  if (!rows.length) return asker(textReply(t(loc, 'whoami.unmapped.title'), t(loc, 'whoami.unmapped.text'), 'info'));
  return asker({
    title: t(loc, 'whoami.mine.title'),
    severity: 'info',
    sections: [{ table: { columns: [t(loc, 'whoami.col.unixUser'), t(loc, 'whoami.col.hosts'), t(loc, 'whoami.col.from')], rows } }],
  });
}
