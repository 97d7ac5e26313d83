// The users' language: message catalogues in locales/en.json and locales/zh.json (flat keys, `{name}`
// placeholders), read once from the project root, and `t(locale, key, vars)`. A tiny typed function
// rather than i18next: the keys are checked by the compiler against en.json (a typo does not build),
// and no runtime dependency to bundle. Plurals are CLDR's, through Intl.PluralRules: a message that
// counts is held as `key_one`, `key_other` (the categories its language has: zh has only `other`) and
// `t(locale, 'key', { count })` picks the form (messages that count by `{n}` are picked by `n`).
// A key missing from a catalogue, or a placeholder without a value, falls back (English, then the key)
// so a chat user still gets an answer, and is recorded in `missingKeys()` for the tests to fail on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type enCatalogue from '../../locales/en.json';
import { PROJECT_ROOT } from './paths.js';

export const LOCALES = ['en', 'zh'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** CLDR plural categories, as a catalogue key's suffix (`hosts_one`, `hosts_other`). */
export const PLURAL_CATEGORIES = ['zero', 'one', 'two', 'few', 'many', 'other'] as const;
type PluralBase<K> = K extends `${infer B}_${(typeof PLURAL_CATEGORIES)[number]}` ? B : K;

/**
 * Every key of the English catalogue, plural forms by their base (`status.title` for `status.title_one`
 * and `status.title_other`); zh must have the same set, each plural in its own categories (test/i18n/catalogues.test.ts).
 */
export type MessageKey = PluralBase<keyof typeof enCatalogue>;

/** A catalogue key's plural base and category (`hosts_one` -> hosts, one), or null for a plain key. */
export function pluralParts(key: string): { base: string; category: Intl.LDMLPluralRule } | null {
  const m = /^(.+)_(zero|one|two|few|many|other)$/.exec(key);
  return m ? { base: m[1], category: m[2] as Intl.LDMLPluralRule } : null;
}

const pluralRules = new Map<Locale, Intl.PluralRules>();
/** The language's plural rules (cached: building them is not free). */
export function pluralRulesOf(locale: Locale): Intl.PluralRules {
  let r = pluralRules.get(locale);
  if (!r) pluralRules.set(locale, (r = new Intl.PluralRules(locale)));
  return r;
}

/** The template of a plural message in `loc` for this count (`count`, else `n`), or undefined where the catalogue has none. */
function pluralTemplate(loc: Locale, key: string, vars: Vars): string | undefined {
  const c = catalogue(loc);
  if (c[`${key}_other`] === undefined) return undefined;
  const count = Number(vars.count ?? vars.n);
  const category = Number.isFinite(count) ? pluralRulesOf(loc).select(count) : 'other';
  return c[`${key}_${category}`] ?? c[`${key}_other`];
}

export type Vars = Record<string, string | number>;

const catalogues = new Map<Locale, Record<string, string>>();
const missing = new Set<string>();

/** One catalogue as its file holds it (cached). */
export function catalogue(locale: Locale): Record<string, string> {
  let c = catalogues.get(locale);
  if (!c) {
    c = JSON.parse(readFileSync(join(PROJECT_ROOT, 'locales', `${locale}.json`), 'utf8')) as Record<string, string>;
    catalogues.set(locale, c);
  }
  return c;
}

/** The message `key` in `locale` (English when none is given) with `{name}` filled from `vars`. */
export function t(locale: Locale | undefined, key: MessageKey, vars: Vars = {}): string {
  const loc = locale ?? DEFAULT_LOCALE;
  let template = catalogue(loc)[key] ?? pluralTemplate(loc, key, vars);
  if (template === undefined) {
    missing.add(`${loc}:${key}`);
    template = catalogue(DEFAULT_LOCALE)[key] ?? pluralTemplate(DEFAULT_LOCALE, key, vars) ?? key;
  }
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = vars[name];
    if (v === undefined) {
      missing.add(`${loc}:${key}:{${name}}`);
      return whole;
    }
    return String(v);
  });
}

/** Keys (and placeholders) asked for but absent since the last reset: `zh:help.intro`, `en:x:{n}`. */
export function missingKeys(): string[] {
  return [...missing].sort();
}

export function resetMissingKeys(): void {
  missing.clear();
}

/**
 * A language tag or POSIX locale as platforms send it (Discord `zh-CN`, Slack `zh-CN`, `LANG=zh_CN.UTF-8`,
 * `en_US`) as one of ours; undefined for anything else (`C`, `POSIX`, `fr-FR`), so the next source decides.
 */
export function localeFromTag(tag: string | undefined | null): Locale | undefined {
  if (!tag) return undefined;
  const lang = /^([a-z]{2,3})(?:[-_.@]|$)/i.exec(tag.trim())?.[1]?.toLowerCase();
  return lang === 'zh' ? 'zh' : lang === 'en' ? 'en' : undefined;
}

/** The console's and CLI's language: LC_ALL, then LC_MESSAGES, then LANG (POSIX precedence). */
export function localeFromEnv(env: NodeJS.ProcessEnv = process.env): Locale | undefined {
  for (const name of ['LC_ALL', 'LC_MESSAGES', 'LANG']) {
    const v = env[name];
    if (v) return localeFromTag(v);
  }
  return undefined;
}

export interface LocaleSettings {
  /** The config's `locale.default` (en when unset). */
  default?: Locale;
  /** The config's `locale.channels`: channel ID -> language, for every user in that channel. */
  channels?: Record<string, Locale>;
}

/**
 * The one place a reply's language is chosen: the channel's language from the config, else the user's
 * (from the adapter: Discord's interaction locale, Slack's user locale, LANG in the console), else the
 * config's default, else English.
 */
export function resolveLocale(settings: LocaleSettings | undefined, channelId: string | undefined, userLocale: Locale | undefined): Locale {
  const channel = channelId !== undefined && settings?.channels ? settings.channels[channelId] : undefined;
  return channel ?? userLocale ?? settings?.default ?? DEFAULT_LOCALE;
}

// The language of what the bot sends on its own (scheduled digests, owner and notify direct messages),
// where no asker's context gives it: the config's locale settings, set once at start-up, and the
// languages users were last seen with (an adapter records each asker's platform locale).
let configured: LocaleSettings | undefined;
const seen = new Map<string, Locale>();
const MAX_SEEN = 10_000;

/** The config's `locale:` for what is sent unasked (createApp calls it once; tests may call it again). */
export function configureLocales(settings: LocaleSettings | undefined): void {
  configured = settings;
}

/** A user's language as their platform last told it (Discord interaction locale, Slack users.info); kept in memory. */
export function rememberUserLocale(platform: string, userId: string, locale: Locale | undefined): void {
  if (!locale) return;
  const key = `${platform}:${userId}`;
  seen.delete(key);
  seen.set(key, locale);
  if (seen.size > MAX_SEEN) seen.delete(seen.keys().next().value!);
}

/** The language of a post to a channel: the config's language for that channel, else its default. */
export function channelLocale(channelId: string | undefined): Locale {
  return resolveLocale(configured, channelId, undefined);
}

/** The language of a direct message to a user: theirs where it was seen, else the config's default. */
export function recipientLocale(platform: string, userId: string): Locale {
  return resolveLocale(configured, undefined, seen.get(`${platform}:${userId}`));
}
