// Renders a Reply as one Discord embed within its limits: 256-char title, 4096-char description,
// 25 fields (256/1024), 6000 characters in all. Tables and code go in ``` blocks; when something no
// longer fits (or a table is longer than INLINE_TABLE_ROWS), the rows that fit are shown, the message
// says how many, and the full text is attached as a file.
import { t } from '../../core/i18n.js';
import type { Reply, ReplyFile } from '../../core/reply.js';
import { linkMentions, resolveMentions, type MentionStyle } from '../../core/mention.js';
import { DISCORD_LIMITS as L, INLINE_TABLE_ROWS, chunkLines, chunkTable, cutLine, replyAsFile, tableAsFile } from '../render-limits.js';

export interface DiscordEmbed {
  title: string;
  description?: string;
  color: number;
  fields?: { name: string; value: string; inline?: boolean }[];
  footer?: { text: string };
  /** An attached picture shown inside the embed (`attachment://NAME`): a chart. */
  image?: { url: string };
}

export interface DiscordMessage {
  content?: string;
  embeds: DiscordEmbed[];
  files: ReplyFile[];
}

const COLOR = { info: 0x3b82f6, ok: 0x22c55e, warning: 0xf59e0b, error: 0xef4444 } as const;
const FENCE = 8; // ```\n + \n```
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;

/**
 * Text from outside (a pasted log's facts and error line, command lines, file and host names) as Discord
 * shows it literally outside code blocks: markdown specials and a masked link's brackets backslashed, `<`
 * so no <@id>, <@&role>, <#channel> or <https://…> of its own becomes markup, headings, subtext and quotes
 * at line starts, and @everyone / @here broken by a zero-width space (the bot also allows no mentions).
 * Every string of a reply passes here except code, tables (fenced) and the footer (Discord shows footers
 * without markdown). Linear: each pattern is one character class or an anchored [ \t]* run.
 */
const escapeMd = (s: string) =>
  s
    .replace(/([\\*_~`|[\]<])/g, '\\$1')
    .replace(/^([ \t]*)(>|#{1,3}(?=[ \t])|-#(?=[ \t]))/gm, '$1\\$2')
    .replace(/@(everyone|here)\b/g, '@\u200b$1');

/**
 * A person as Discord writes them: <@id> wherever their Discord id is known, else the name. The bot
 * sends every message with no allowed mentions (and mentions in embeds never notify), so it never pings:
 * `link` (may notify) makes no difference here.
 */
const discordPerson: MentionStyle = (m) => (m.discord && /^\d{5,25}$/.test(m.discord) ? `<@${m.discord}>${escapeMd(m.after ?? '')}` : null);

export function renderDiscord(given: Reply): DiscordMessage {
  const reply = resolveMentions(given, discordPerson);
  const link = (t: string) => linkMentions(t, reply, discordPerson);
  const files: ReplyFile[] = [...(reply.files ?? [])];
  const title = cutLine(escapeMd(reply.title), L.title);
  const footerText = reply.footer ? cutLine(reply.footer, L.footer) : undefined;
  const fields: NonNullable<DiscordEmbed['fields']> = [];
  const allFields = reply.sections.flatMap((s) => s.fields ?? []);
  const NOTE_ROOM = 300;
  // Fields get what is left after title, footer, notes and a fair share for the description.
  let fieldBudget = L.total - title.length - (footerText?.length ?? 0) - NOTE_ROOM - 1500;
  let fieldsDropped = false;
  for (const f of allFields.slice(0, L.fields)) {
    const field = {
      name: cutLine(escapeMd(f.label || '-'), L.fieldName),
      value: link(cutLine(escapeMd(f.value || '-'), L.fieldValue)),
      inline: f.value.length < 40,
    };
    if (field.name.length + field.value.length > fieldBudget) {
      fieldsDropped = true;
      break;
    }
    fieldBudget -= field.name.length + field.value.length;
    fields.push(field);
  }
  const budget = L.total - title.length - (footerText?.length ?? 0) - fields.reduce((n, f) => n + f.name.length + f.value.length, 0) - NOTE_ROOM;
  const descMax = Math.min(L.description - NOTE_ROOM, budget);
  const parts: string[] = [];
  let used = 0;
  let overflow = false;
  const room = () => descMax - used - (parts.length ? 2 : 0);
  const add = (s: string) => {
    used += s.length + (parts.length ? 2 : 0);
    parts.push(s);
  };
  const notes: string[] = [];
  let tableNo = 0;
  for (const s of reply.sections) {
    if (overflow) break;
    if (s.heading) {
      const h = link(`**${cutLine(escapeMd(s.heading), 250)}**`);
      if (h.length > room()) {
        overflow = true;
        break;
      }
      add(h);
    }
    if (s.text) {
      for (const c of chunkLines(escapeMd(s.text), 1000).map(link)) {
        if (c.length > room()) {
          overflow = true;
          break;
        }
        add(c);
      }
    }
    if (s.table) {
      tableNo++;
      const total = s.table.rows.length;
      const max = room() - FENCE;
      const { chunks, rowsShown } = max > 40 ? chunkTable(s.table, max, INLINE_TABLE_ROWS) : { chunks: [], rowsShown: 0 };
      if (chunks.length) add('```\n' + chunks[0].replace(/```/g, "'''") + '\n```');
      const shown = chunks.length ? chunks[0].split('\n').length - 2 : 0;
      if (shown < total) {
        const name = `table-${tableNo}.txt`;
        files.push(tableAsFile(s.table, name));
        notes.push(t(reply.locale, 'render.tableCut', { shown, total, name }));
      }
      void rowsShown;
    }
    if (s.code) {
      for (const c of chunkLines(s.code.replace(/```/g, "'''"), 1500)) {
        if (c.length + FENCE > room()) {
          overflow = true;
          break;
        }
        add('```\n' + c + '\n```');
      }
    }
  }
  if (allFields.length > L.fields || fieldsDropped) overflow = true;
  if (overflow) {
    const full = replyAsFile(reply);
    files.push(full);
    notes.push(t(reply.locale, 'render.discordLong', { name: full.filename }));
  }
  if (notes.length) parts.push(`*${cutLine(notes.join(' '), NOTE_ROOM - 4)}*`);
  const embed: DiscordEmbed = { title, color: COLOR[reply.severity] };
  if (parts.length) embed.description = parts.join('\n\n');
  if (fields.length) embed.fields = fields;
  if (footerText) embed.footer = { text: footerText };
  // A chart is shown in the embed at full width rather than as a loose attachment under it. Discord
  // matches attachment:// by file name, so only names it can address (no blanks or slashes) qualify.
  const picture = files.find((f) => IMAGE_TYPES.test(f.contentType) && /^[\w.-]{1,100}$/.test(f.filename));
  if (picture) embed.image = { url: `attachment://${picture.filename}` };
  return { embeds: [embed], files };
}

export function embedLength(e: DiscordEmbed): number {
  return (
    e.title.length + (e.description?.length ?? 0) + (e.footer?.text.length ?? 0) + (e.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}
