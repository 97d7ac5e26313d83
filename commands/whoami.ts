// /gpu whoami [UNIXUSER]: say which unix user on the GPU hosts is you, so status and leak digests name
// you instead of a pid (and, where a channel opts in, message you about your own jobs). A claim waits
// for an admin: `/gpu whoami approve ID` (or `reject ID`); `/gpu whoami pending` lists them.
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/core/command.js';
import { Mentions } from '../src/core/mention.js';
import { textReply, type Reply } from '../src/core/reply.js';
import type { ClaimRow } from '../src/owners/store.js';
import { parseOwnerKey } from '../src/owners/directory.js';
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
  | { error: string };

/**
 * `whoami`, `whoami alice [Alice Liddell]`, `whoami claim alice@gpu3`, `whoami approve 3`,
 * `whoami reject 3`, `whoami pending`.
 */
export function parseWhoamiWords(words: readonly string[]): Words {
  const [first, second, ...rest] = words;
  if (first === undefined || (first === 'show' && second === undefined)) return { action: 'show' };
  if (first === 'pending' && second === undefined) return { action: 'pending' };
  if (first === 'approve' || first === 'confirm' || first === 'reject') {
    if (second === undefined || rest.length) return { error: `${first} takes one claim ID (or the unix user claimed): \`/gpu whoami pending\` lists them` };
    const action = first === 'reject' ? 'reject' : 'approve';
    if (/^\d{1,9}$/.test(second)) return { action, id: Number(second) };
    const k = parseOwnerKey(second);
    return 'error' in k ? { error: `${first} takes a claim ID or the unix user claimed: ${k.error}` } : { action, key: second };
  }
  const claim = (key: string | undefined, name: string[]): Words =>
    key === undefined
      ? { error: 'claim takes your unix user name: /gpu whoami claim alice' }
      : { action: 'claim', key, ...(name.length ? { name: name.join(' ') } : {}) };
  if (first === 'claim') return claim(second, rest);
  if (WORDS.has(first)) return { error: `usage: /gpu ${USAGE}` };
  return claim(first, second === undefined ? [] : [second, ...rest]);
}

const asker = (r: Reply): Reply => ({ ...r, visibility: 'asker' });
const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const keyOf = (c: { unixUser: string; host: string | null }) => (c.host ? `${c.unixUser}@${c.host}` : c.unixUser);

/** The chat user behind a claim: "Alice Liddell (alice)"; a Discord mention, a Slack one where `link`. */
function claimant(m: Mentions, c: ClaimRow, link = false): string {
  const id = c.userId;
  const who = c.name ?? (c.platform === 'console' ? id : `${c.platform} user ${id}`);
  return m.of({
    name: `${who} (${c.unixUser})`,
    after: ` (${c.unixUser})`,
    ...(c.platform === 'slack' ? { slack: id } : c.platform === 'discord' ? { discord: id } : {}),
    ...(link ? { link: true } : {}),
  });
}

export default defineCommand({
  name: 'whoami',
  summary: 'Which unix user on the hosts is you (whoami alice), so status and digests name you; an admin approves',
  usage: USAGE,
  options: z
    .object({ _: z.array(z.string().max(100)).max(10) })
    .passthrough()
    .superRefine((o, ctx) => {
      const r = parseWhoamiWords(o._);
      if ('error' in r) ctx.addIssue({ code: 'custom', message: r.error });
      // A name that cannot be a unix user is a usage error, answered to the asker alone.
      else if (r.action === 'claim') {
        const k = parseOwnerKey(r.key);
        if ('error' in k) ctx.addIssue({ code: 'custom', message: k.error });
        else if (r.name !== undefined && !OWNER_NAME.test(r.name))
          ctx.addIssue({
            code: 'custom',
            message: `"${r.name.replace(/[^\x20-\x7e]/g, '?').slice(0, 40)}" is not a display name: letters, digits, blanks, . ' - (max 64)`,
          });
      }
    }),
  requiresAdmin: (o) => ADMIN_WORDS.has(o._[0] ?? ''),
  run(o, ctx) {
    return Promise.resolve(whoami(o._, ctx));
  },
});

function whoami(args: string[], ctx: CommandContext): Reply {
  const owners = ctx.services.owners;
  if (!owners) return asker(textReply('whoami', 'Owner mappings are not available here.', 'info'));
  const words = parseWhoamiWords(args);
  if ('error' in words) return asker(textReply(`Usage: /gpu ${USAGE}`, words.error, 'warning'));
  switch (words.action) {
    case 'show':
      return show(ctx);
    case 'pending': {
      const open = owners.pending();
      if (!open.length) return asker(textReply('No claims waiting', 'Nobody has asked for a unix user name.', 'info'));
      const m = new Mentions();
      return asker({
        title: `${open.length} claim(s) waiting for an admin`,
        severity: 'info',
        sections: [
          {
            table: { columns: ['ID', 'Unix user', 'Platform', 'Asked (UTC)'], rows: open.map((c) => [String(c.id), keyOf(c), c.platform, when(c.createdMs)]) },
          },
          { text: open.map((c) => `#${c.id}: ${claimant(m, c)}`).join('\n') },
        ],
        footer: '`/gpu whoami approve ID` makes one active; `/gpu whoami reject ID` drops it.',
        mentions: m.table(),
      });
    }
    case 'approve': {
      const id = claimId(owners, words);
      if (typeof id !== 'number') return id;
      const r = owners.approve(id, `${ctx.platform}:${ctx.userId}`);
      if (!r) return asker(textReply(`No claim #${id} waiting`, '`/gpu whoami pending` lists the claims waiting for an admin.', 'warning'));
      const m = new Mentions();
      return {
        title: `Claim #${r.claim.id} approved: ${keyOf(r.claim)}`,
        severity: 'ok',
        sections: [
          {
            text: `${keyOf(r.claim)} on ${r.claim.host ?? 'every host'} is now ${claimant(m, r.claim, true)}: status and leak digests name them.${r.replaced ? ` It replaces #${r.replaced.id}.` : ''}`,
          },
        ],
        mentions: m.table(),
      };
    }
    case 'reject': {
      const id = claimId(owners, words);
      if (typeof id !== 'number') return id;
      const r = owners.reject(id, `${ctx.platform}:${ctx.userId}`);
      return r
        ? asker(textReply(`Claim #${r.id} rejected`, `${keyOf(r)} is not mapped by that claim.`, 'ok'))
        : asker(textReply(`No claim #${id} to reject`, '`/gpu whoami pending` lists the claims waiting for an admin.', 'warning'));
    }
    case 'claim': {
      const r = owners.claim(ctx.platform, ctx.userId, words.key, words.name);
      if (!r.ok) return asker(textReply('Not claimed', r.reason, 'warning'));
      const c = r.claim;
      if (c.state === 'active') return asker(textReply(`${keyOf(c)} is already you`, `Approved as claim #${c.id}.`, 'ok'));
      return {
        title: `Claim #${c.id}: ${keyOf(c)} is me${c.name ? ` (${c.name})` : ''}${r.existed ? ', already asked' : ''}`,
        severity: 'info',
        sections: [{ text: `Waiting for an admin to approve it: \`/gpu whoami approve ${c.id}\`. Until then status and digests show the unix user name.` }],
      };
    }
  }
}

/** The claim an admin means: its ID, or the one claim waiting for a unix user (several: pick by ID). */
function claimId(owners: NonNullable<CommandContext['services']['owners']>, w: { id: number } | { key: string }): number | Reply {
  if ('id' in w) return w.id;
  const waiting = owners.pending().filter((c) => keyOf(c) === w.key);
  if (waiting.length === 1) return waiting[0].id;
  return asker(
    waiting.length
      ? textReply(
          `${waiting.length} claims for ${w.key} are waiting`,
          `Pick one by ID: ${waiting.map((c) => `#${c.id}`).join(', ')} (\`/gpu whoami pending\` shows who asked).`,
          'warning',
        )
      : textReply(`No claim for ${w.key} waiting`, '`/gpu whoami pending` lists the claims waiting for an admin.', 'warning'),
  );
}

function show(ctx: CommandContext): Reply {
  const { config, claims } = ctx.services.owners!.mine(ctx.platform, ctx.userId);
  const rows = [
    ...config.map((o) => [keyOf(o), o.host ?? 'every host', 'config file']),
    ...claims.map((c) => [keyOf(c), c.host ?? 'every host', c.state === 'active' ? `approved (#${c.id})` : `waiting for an admin (#${c.id})`]),
  ];
  if (!rows.length) return asker(textReply('No unix user is mapped to you', 'Say which one is yours: `/gpu whoami alice` (an admin approves it).', 'info'));
  return asker({ title: 'Your unix users on the GPU hosts', severity: 'info', sections: [{ table: { columns: ['Unix user', 'Hosts', 'From'], rows } }] });
}
