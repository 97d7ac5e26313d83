// What a service, a parser or a source says to a person, kept as the catalogue's key and its values until
// the reply is made in the asker's language (issue 24 §2): nothing is made in English and read back.
// Text that is not ours (an exporter's, a host's or SSH's own error words) travels as a plain string and
// is shown as it came. Where a message goes to a log, an Error or a machine-read field, it is rendered in
// English at that edge (`english`, `MessageError`).
import { t, type Locale, type MessageKey } from './i18n.js';

/** A catalogue message: its key and values; a value may itself be a message (rendered in the same language). */
export interface Message {
  readonly key: MessageKey;
  readonly params?: Readonly<Record<string, MessageParam>>;
}
export type MessageParam = string | number | Message;

/** What a reply may show: a catalogue message, or someone else's words (a string), shown as they are. */
export type Text = Message | string;

export function message(key: MessageKey, params?: Record<string, MessageParam>): Message {
  return params ? { key, params } : { key };
}

export function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { key?: unknown }).key === 'string';
}

/** The text in `locale` (English when none is given): a message from the catalogue, its nested values too; foreign text as it is. */
export function render(locale: Locale | undefined, text: Text): string {
  if (typeof text === 'string') return text;
  const vars: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(text.params ?? {})) vars[name] = typeof value === 'object' ? render(locale, value) : value;
  return t(locale, text.key, vars);
}

/** The text in English: for logs, errors and fields read by machines or operators. */
export const english = (text: Text): string => render('en', text);

/** Texts in `locale`, one after another: '; ' in English, the language's own semicolon in Chinese. */
export function renderAll(locale: Locale | undefined, texts: readonly Text[]): string {
  return texts.map((x) => render(locale, x)).join(locale === 'zh' ? '；' : '; ');
}

/** An error whose words are a catalogue message: its `message` is the English (logs); a reply renders `text` in the asker's language. */
export class MessageError extends Error {
  constructor(
    readonly text: Message,
    options?: ErrorOptions,
  ) {
    super(english(text), options);
  }
}

/** What an error says, for a reply: the message it carries (a MessageError, an SshError made from one), else its own first line (foreign text), at most `max` characters. */
export function errorText(e: unknown, max = 500): Text {
  const carried = e instanceof Error ? (e as { text?: unknown }).text : undefined;
  if (isMessage(carried)) return carried;
  const said = e instanceof Error ? e.message : String(e);
  return said.split('\n')[0].slice(0, max);
}

// A zod check's message is a string fixed when the schema is built (a command's `.min(1, ...)`), before
// anyone's language is known. The schema holds a reference to the message instead of its words: the
// registry shows the message it names in the asker's language. Issues raised while parsing (a
// superRefine) carry the message itself in `params.message`.
const schemaMessages: Message[] = [];
const MAX_SCHEMA_MESSAGES = 1000;
const SCHEMA_REF = /^\u2063msg:(\d{1,4})$/;

/** A reference to `m` to put where zod takes a message string, in a schema built once (module load). */
export function schemaMessage(key: MessageKey, params?: Record<string, MessageParam>): string {
  if (schemaMessages.length >= MAX_SCHEMA_MESSAGES) throw new Error('schemaMessage: schemas are built once; this one is built per call');
  schemaMessages.push(message(key, params));
  return `\u2063msg:${schemaMessages.length - 1}`;
}

/** The params of a custom zod issue that carries `m` (a superRefine's issue), and its message in English for any other reader. */
export function issueWith(m: Message): { code: 'custom'; message: string; params: { message: Message } } {
  return { code: 'custom', message: english(m), params: { message: m } };
}

/** The message a zod issue carries (a schema's reference, or a custom issue's params), or undefined for zod's own wording. */
export function messageOfIssue(issue: { message: string; params?: unknown }): Message | undefined {
  const carried = (issue.params as { message?: unknown } | undefined)?.message;
  if (isMessage(carried)) return carried;
  const ref = SCHEMA_REF.exec(issue.message);
  return ref ? schemaMessages[Number(ref[1])] : undefined;
}
