// Naming a person in a platform-neutral Reply. A command never writes Slack's <@U…> or Discord's <@id>:
// it puts a token in its text (`Mentions.of(person)`) and the table of people in `reply.mentions`; each
// adapter renders the token (Slack: <@U…> where it may link, Discord: <@id>, the console: the name).
//
// Tokens are private-use characters around a nonce made for that reply, so text from hosts or users
// (a `ps` command line, a pasted log) can never forge one: an unknown token is removed, not rendered.
import { randomBytes } from 'node:crypto';
import type { Mention, Reply, ReplySection } from './reply.js';

export type { Mention };

const OPEN = '\uE000';
const CLOSE = '\uE001';
const TOKEN = /\uE000([0-9a-f]{1,40})\uE001/g;
const STRAY = /[\uE000\uE001]/g;

/** Collects the people a reply names; `table()` goes in `reply.mentions`. */
export class Mentions {
  private readonly nonce = randomBytes(6).toString('hex');
  private readonly people = new Map<string, Mention>();
  private readonly byKey = new Map<string, string>();

  /** The token that stands for this person in the reply's text. */
  of(m: Mention): string {
    const key = `${m.name}\u0000${m.after ?? ''}\u0000${m.slack ?? ''}\u0000${m.discord ?? ''}\u0000${m.link ? 1 : 0}`;
    let id = this.byKey.get(key);
    if (!id) {
      id = `${this.nonce}${this.people.size.toString(16)}`;
      this.byKey.set(key, id);
      this.people.set(id, { ...m });
    }
    return `${OPEN}${id}${CLOSE}`;
  }

  get size(): number {
    return this.people.size;
  }

  table(): Record<string, Mention> {
    return Object.fromEntries(this.people);
  }
}

/**
 * How a platform writes a person where it may link them: its mention markup followed by `after`, both
 * safe in that platform's text (escaped there), or null for the plain name.
 */
export type MentionStyle = (m: Mention) => string | null;

const mapStrings = (reply: Reply, text: (s: string) => string, plain: (s: string) => string): Reply => ({
  ...reply,
  title: plain(reply.title),
  ...(reply.footer !== undefined ? { footer: plain(reply.footer) } : {}),
  sections: reply.sections.map((s): ReplySection => ({
    ...s,
    ...(s.heading !== undefined ? { heading: text(s.heading) } : {}),
    ...(s.text !== undefined ? { text: text(s.text) } : {}),
    ...(s.fields ? { fields: s.fields.map((f) => ({ label: plain(f.label), value: text(f.value) })) } : {}),
    ...(s.code !== undefined ? { code: plain(s.code) } : {}),
    ...(s.table ? { table: { columns: s.table.columns.map(plain), rows: s.table.rows.map((r) => r.map(plain)) } } : {}),
  })),
});

/**
 * First step of rendering: every token becomes the person's plain name, except in headings, text and
 * field values where `style` gives a link (those tokens stay, for `linkMentions` after escaping).
 * Stray or forged token characters are removed everywhere.
 */
export function resolveMentions(reply: Reply, style?: MentionStyle): Reply {
  const people = reply.mentions ?? {};
  const hasAny = (s: string) => s.includes(OPEN) || s.includes(CLOSE);
  const plain = (s: string) => (hasAny(s) ? s.replace(TOKEN, (_, id: string) => people[id]?.name ?? '').replace(STRAY, '') : s);
  // Linked tokens stay for linkMentions (which also removes any stray token character left here).
  const text = style
    ? (s: string) => (hasAny(s) ? s.replace(TOKEN, (all, id: string) => (people[id] ? (style(people[id]) !== null ? all : people[id].name) : '')) : s)
    : plain;
  return mapStrings(reply, text, plain);
}

/** Second step, after the platform escaped its text: the tokens left become the platform's mention markup. */
export function linkMentions(s: string, reply: Reply, style: MentionStyle): string {
  if (!s.includes(OPEN)) return s;
  const people = reply.mentions ?? {};
  return s
    .replace(TOKEN, (_, id: string) => {
      const m = people[id];
      if (!m) return '';
      const linked = style(m);
      return linked === null ? m.name : linked;
    })
    .replace(STRAY, '');
}

/** The reply with every person as a plain name (the console, files, logs). */
export const plainMentions = (reply: Reply): Reply => resolveMentions(reply);
