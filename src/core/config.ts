// The building blocks of the settings (core's own schemas and the error and path helpers every part
// uses). The whole config, composed from these and the wings' schemas, is src/config.ts: the ground
// floor imports no wing (issue 24 §4).
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Cron } from 'croner';
import { z } from 'zod';
import { didYouMean } from './did-you-mean.js';
import { CHAT_PLATFORMS } from './platform.js';

export const hostName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, . _ - (max 63)');

export const hostSchema = z
  .object({
    name: hostName,
    host: z.string().regex(/^[A-Za-z0-9._:-]{1,253}$/, 'a host name, IP address or ssh config alias'),
    port: z.number().int().min(1).max(65535).optional(),
    user: z
      .string()
      .regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, 'a Unix user name')
      .optional(),
    identity_file: z.string().optional(),
    host_key: z
      .string()
      .regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, 'a fingerprint as `ssh-keygen -lf` prints it: SHA256:...')
      .optional(),
  })
  .strict();

/** An address to listen on: an IPv4/IPv6 address or a host name (0.0.0.0 and :: mean every interface). */
export const listenHost = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,253}$/, 'an address to listen on: 127.0.0.1 (this machine only), 0.0.0.0 or :: (every interface)');

/** croner's own parser decides (5 or 6 fields, ranges, names); a bad expression never reaches the scheduler. */
function isCron(expr: string): boolean {
  try {
    new Cron(expr, { paused: true }).stop();
    return true;
  } catch {
    return false;
  }
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const digestSchema = z
  .object({
    name: z.string().default('daily'),
    platform: z.enum(CHAT_PLATFORMS),
    channel: z.string().min(1),
    cron: z.string().max(200).refine(isCron, 'a cron expression (5 or 6 fields), e.g. "0 9 * * 1-5"'),
    timezone: z.string().max(100).refine(isTimeZone, 'an IANA time zone such as "Europe/Berlin" or "UTC"').default('UTC'),
    // Opt-in: the owner of a new or worse finding (from `owners:` or an approved `/gpu whoami`) also gets
    // it as a direct message, with the chart and the fix, once per finding until it gets worse.
    dm_owners: z.boolean().optional(),
  })
  .strict();

/**
 * `feedback.weekly`: where and when the week's 👍 / 👎 and kept logs are posted. One channel of the admins
 * (not a DM to each admin: `admins.discord` may hold role ids, which cannot be messaged), on the digests' clock.
 */
export const feedbackWeeklySchema = z
  .object({
    platform: z.enum(CHAT_PLATFORMS),
    channel: z.string().min(1),
    cron: z.string().max(200).refine(isCron, 'a cron expression (5 or 6 fields), e.g. "0 9 * * 1"').default('0 9 * * 1'),
    timezone: z.string().max(100).refine(isTimeZone, 'an IANA time zone such as "Europe/Berlin" or "UTC"').default('UTC'),
  })
  .strict();

/** The weekly feedback list's name in the digests' last-run record (no digest may take it). */
export const FEEDBACK_WEEKLY_NAME = 'feedback-weekly';

/** A unix user on the hosts, POSIX-ish (what `ps -o user=` shows for a named account). */
export const UNIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
/** An `owners:` key: `alice` (every host) or `alice@gpu3` (that host only; it wins over `alice` there). */
export const OWNER_KEY = /^[a-z_][a-z0-9_-]{0,31}(@[A-Za-z0-9][A-Za-z0-9._-]{0,62})?$/;

/** A person's display name in `owners:` or a claim: no chat markup can ride in it. */
export const OWNER_NAME = /^[\p{L}\p{N}][\p{L}\p{N} .'-]{0,63}$/u;

export const ownerSchema = z
  .object({
    slack: z
      .string()
      .regex(/^[UW][A-Z0-9]{2,20}$/, 'a Slack user ID like U012ABCDEF')
      .optional(),
    discord: z
      .string()
      .regex(/^\d{5,25}$/, 'a Discord user ID (a snowflake like 123456789012345678)')
      .optional(),
    // Shown in digests and status; letters, digits, blanks and . ' - only, so it carries no chat markup.
    name: z.string().regex(OWNER_NAME, "a display name: letters, digits, blanks, . ' - (max 64)").optional(),
  })
  .strict();

export class ConfigError extends Error {}

/** Expands ~ and resolves relative paths against the config file's folder. */
export function resolvePath(p: string, base: string): string {
  if (p === '~' || p.startsWith('~/')) return resolve(homedir(), p.slice(2));
  return resolve(base, p);
}

/** The keys an object schema accepts at a path of the document (for "did you mean"). */
function keysAt(root: z.ZodType, path: PropertyKey[]): string[] {
  let schema = root;
  const unwrap = (t: z.ZodType): z.ZodType => {
    let cur = t as z.ZodType & { unwrap?: () => z.ZodType; removeDefault?: () => z.ZodType };
    for (let i = 0; i < 5; i++) {
      if (typeof cur.removeDefault === 'function') cur = cur.removeDefault();
      else if (typeof cur.unwrap === 'function' && !(cur instanceof z.ZodObject) && !(cur instanceof z.ZodArray)) cur = cur.unwrap();
      else break;
    }
    return cur;
  };
  for (const step of path) {
    schema = unwrap(schema);
    if (schema instanceof z.ZodArray && typeof step === 'number') schema = schema.element as z.ZodType;
    else if (schema instanceof z.ZodRecord && typeof step === 'string') schema = schema.valueType as z.ZodType;
    else if (schema instanceof z.ZodObject && typeof step === 'string' && step in schema.shape) schema = schema.shape[step] as z.ZodType;
    else return [];
  }
  schema = unwrap(schema);
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/**
 * One line per problem of `schema`'s parse: the key path, what was expected, a suggestion for an
 * unknown key, the YAML line.
 */
export function describeIssues(schema: z.ZodType, issues: z.core.$ZodIssue[], lineOf?: (path: PropertyKey[]) => number | undefined): string[] {
  const out: string[] = [];
  const at = (path: PropertyKey[]) => {
    const line = lineOf?.(path);
    return line ? ` (line ${line})` : '';
  };
  for (const i of issues) {
    const where = i.path.map(String).join('.') || '(root)';
    if (i.code === 'unrecognized_keys') {
      const known = keysAt(schema, i.path);
      for (const key of i.keys) {
        const meant = didYouMean(key, known);
        out.push(
          `  ${where}: unknown key "${key.slice(0, 60)}"${meant ? ` (did you mean "${meant}"?)` : known.length ? ` (valid: ${known.join(', ')})` : ''}${at([...i.path, key])}`,
        );
      }
    } else if (i.code === 'invalid_key') {
      // A record key (an `owners:` entry): name the key and what a key must be.
      const key = String(i.path[i.path.length - 1] ?? '').slice(0, 60);
      const parent = i.path.slice(0, -1).map(String).join('.') || '(root)';
      out.push(`  ${parent}: "${key}" is not a valid key: ${i.issues[0]?.message ?? i.message}${at(i.path)}`);
    } else {
      out.push(`  ${where}: ${i.message}${at(i.path)}`);
    }
  }
  return out;
}
