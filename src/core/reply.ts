// The platform-neutral reply every command returns. Adapters (console, Slack, Discord) render it;
// no command formats for a platform itself.

import type { Locale } from './i18n.js';

export type Severity = 'info' | 'ok' | 'warning' | 'error';

export interface ReplyTable {
  columns: string[];
  rows: string[][];
}

export interface ReplySection {
  /**
   * What the section is, for code that finds it again (the catalogue key of its heading, `diag.heading.holder`):
   * a section is found by this, never by its words, which are in the asker's language.
   */
  key?: string;
  heading?: string;
  /** Plain text; adapters may add emphasis but never change the words. */
  text?: string;
  fields?: { label: string; value: string }[];
  /** Preformatted text (a command line, a config snippet). */
  code?: string;
  table?: ReplyTable;
}

export interface ReplyFile {
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface Reply {
  title: string;
  severity: Severity;
  sections: ReplySection[];
  footer?: string;
  /** The rule a diagnosis names (the rule base's id): the registry puts it on the outcome for metrics. */
  rule?: string;
  files?: ReplyFile[];
  /** 'asker': only the person who asked sees it where the platform can (Slack ephemeral, Discord flags 64). */
  visibility?: 'asker';
  /**
   * Ask for 👍 / 👎: the opaque id of a stored diagnosis (src/core/feedback.ts). Slack shows two
   * buttons, Discord a button row, the console a `/feedback up|down` hint; a click is
   * `/gpu feedback up|down ID`.
   */
  feedback?: { id: string; /** The language of the buttons or hint (the reply's). */ locale?: Locale };
  /** The language the reply is written in (the registry sets the asker's): a renderer's own notes use it. */
  locale?: Locale;
  /** The people the text names through `Mentions` tokens (src/core/mention.ts); adapters render them. */
  mentions?: Record<string, Mention>;
}

/** A person a reply names (src/core/mention.ts makes the tokens and renders them). */
export interface Mention {
  /** What every platform can show: "Alice (alice)", or the unix user alone. */
  name: string;
  /** Written after a platform mention (" (alice)"): the mention shows the chat name, this keeps the unix user. */
  after?: string;
  slack?: string;
  discord?: string;
  /**
   * May notify the person: Slack then writes <@U…> (a Slack mention always notifies), else the name.
   * Discord writes <@id> wherever it knows the id, since the bot's messages allow no mentions and never
   * ping. Only in headings, text and field values; tables, code and titles always show the name.
   */
  link?: boolean;
}

export const textReply = (title: string, text: string, severity: Severity = 'info'): Reply => ({
  title,
  severity,
  sections: [{ text }],
});
