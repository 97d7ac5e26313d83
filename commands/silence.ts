// /gpu silence HOST [GPU] DURATION (or HOST DURATION [GPU]): no threshold alert and no early alert for that host (or one GPU of it)
// until DURATION (30m, 2h, 1d; a week at most) has passed; `silence list` shows who set each and until
// when, `silence cancel ID` ends one. An admin may silence any host; anyone else a host or GPU where a
// process of theirs ran in the watch's last round. A silence is cancelled by an admin or whoever set it.
import { z } from 'zod';
import { defineCommand } from '../src/core/command.js';
import { t, type Locale } from '../src/core/i18n.js';
import { issueWith, message, render, schemaMessage, type Message } from '../src/core/message.js';
import { textReply, type Reply } from '../src/core/reply.js';
import { HOST_NAME } from '../src/hosts/registry.js';
import { MAX_SILENCE_MS, type Silence } from '../src/watch/silences.js';

// DURATION before the optional GPU, as Discord's options must be (a required one never follows an optional
// one); typed, either order reads (`silence gpu1 0 2h` too): a duration has its unit, a GPU index does not.
const USAGE = 'silence add HOST DURATION [GPU]|list|cancel ID';

type Words =
  { action: 'list' } | { action: 'cancel'; id: number } | { action: 'add'; host: string; gpu: number | null; durationMs: number } | { error: Message };

const UNIT_MS: Record<string, number> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m`, `90min`, `2h`, `1d` in ms, or null. */
export function parseSilenceDuration(word: string): number | null {
  const m = /^(\d{1,5})(m|min|h|d)$/i.exec(word);
  return m ? Number(m[1]) * UNIT_MS[m[2].toLowerCase()] : null;
}

/** The words after `silence`: `list`, `cancel ID`, or `[add] HOST [GPU] DURATION`. Errors are catalogue messages (rendered in run). */
export function parseSilenceWords(words: readonly string[]): Words {
  const [first, ...rest] = words;
  if (first === 'list') return rest.length ? { error: message('usage.silence.listAlone') } : { action: 'list' };
  if (first === 'cancel') {
    if (rest.length !== 1 || !/^\d{1,9}$/.test(rest[0])) return { error: message('usage.silence.id') };
    return { action: 'cancel', id: Number(rest[0]) };
  }
  const args = first === 'add' ? rest : words;
  if (args.length < 2 || args.length > 3) return { error: message('usage.silence.what') };
  const [host, ...tail] = args;
  if (!HOST_NAME.test(host)) return { error: message('usage.hostName') };
  const durationWord = tail.length === 2 && /^\d{1,3}$/.test(tail[1]) && !/^\d+$/.test(tail[0]) ? tail[0] : tail[tail.length - 1];
  const gpuWord = tail.length === 2 ? (durationWord === tail[0] ? tail[1] : tail[0]) : null;
  if (gpuWord !== null && !/^\d{1,3}$/.test(gpuWord)) return { error: message('usage.silence.gpu', { word: gpuWord }) };
  const durationMs = parseSilenceDuration(durationWord);
  if (durationMs === null || durationMs < 60_000 || durationMs > MAX_SILENCE_MS) return { error: message('usage.silence.duration') };
  return { action: 'add', host, gpu: gpuWord === null ? null : Number(gpuWord), durationMs };
}

export default defineCommand({
  name: 'silence',
  summary: t('en', 'cmd.silence.summary'),
  usage: USAGE,
  options: z
    .object({ _: z.array(z.string().max(64)).min(1, schemaMessage('usage.silence.what')).max(4) })
    .passthrough()
    .superRefine((o, ctx) => {
      const r = parseSilenceWords(o._);
      if ('error' in r) ctx.addIssue(issueWith(r.error));
    }),
  async run(o, ctx) {
    const loc = ctx.locale;
    const silences = ctx.services.watch?.silences;
    if (!silences) return textReply(t(loc, 'common.noWatch.title'), t(loc, 'silence.noWatch'), 'info');
    const words = parseSilenceWords(o._);
    if ('error' in words) return textReply(t(loc, 'registry.usage.title', { usage: USAGE }), render(loc, words.error), 'warning');
    const asker = { platform: ctx.platform, userId: ctx.userId, isAdmin: ctx.isAdmin };
    if (words.action === 'list') {
      const open = await silences.list();
      if (!open.length) return textReply(t(loc, 'silence.none.title'), t(loc, 'silence.none.text'), 'info');
      return { title: t(loc, 'silence.list.title', { n: open.length }), severity: 'info', sections: [silenceTable(open, loc)] };
    }
    if (words.action === 'cancel') {
      const r = await silences.cancel(words.id, asker);
      if (r.ok) return textReply(t(loc, 'silence.cancelled.title', { id: words.id, what: what(r.silence, loc) }), t(loc, 'silence.cancelled.text'), 'ok');
      return r.reason === 'denied'
        ? { ...textReply(t(loc, 'silence.denied.title'), t(loc, 'silence.cancelDenied', { id: words.id }), 'warning'), visibility: 'asker' }
        : textReply(t(loc, 'silence.noSuch.title', { id: words.id }), t(loc, 'silence.noSuch.text'), 'warning');
    }
    // A host the registry does not know would silence nothing: a typo is said, not stored.
    if (ctx.services.hosts && !(await ctx.services.hosts.list()).some((h) => h.name === words.host))
      return textReply(t(loc, 'silence.unknownHost.title', { host: words.host }), t(loc, 'silence.unknownHost.text'), 'warning');
    const r = await silences.add(words, asker);
    if (!r.ok)
      return r.reason === 'denied'
        ? { ...textReply(t(loc, 'silence.denied.title'), t(loc, 'silence.denied.text', { host: words.host }), 'warning'), visibility: 'asker' }
        : textReply(t(loc, 'silence.full.title'), t(loc, 'silence.full.text'), 'warning');
    const s = r.silence;
    const reply: Reply = {
      title: t(loc, 'silence.added.title', { id: s.id, what: what(s, loc), until: utc(s.untilMs) }),
      severity: 'ok',
      sections: [{ text: t(loc, 'silence.added.text') }],
      footer: t(loc, 'silence.added.footer', { id: s.id }),
    };
    return reply;
  },
});

const utc = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function what(s: Silence, loc: Locale | undefined): string {
  return s.gpu === null ? t(loc, 'silence.what.host', { host: s.host }) : t(loc, 'silence.what.gpu', { host: s.host, gpu: s.gpu });
}

function silenceTable(open: Silence[], loc: Locale | undefined) {
  return {
    table: {
      columns: [t(loc, 'silence.col.id'), t(loc, 'silence.col.what'), t(loc, 'silence.col.until'), t(loc, 'silence.col.by')],
      rows: open.map((s) => [String(s.id), what(s, loc), utc(s.untilMs), `${s.byUser} (${s.byPlatform})`]),
    },
  };
}
