// The Slack user's language: a slash command or a message carries none, so it is asked of users.info
// with include_locale (the users:read scope) the first time a user is seen, and cached. The lookup never
// holds a request up for long nor fails it: without an answer within the timeout (no scope, Slack slow,
// an error) the reply goes out in the config's default and the answer, if it comes, serves the next one.
import type { WebClient } from '@slack/web-api';
import { localeFromTag, type Locale } from '../../core/i18n.js';

export interface SlackLocaleOptions {
  /** How long a request waits for the first lookup of its user. */
  timeoutMs?: number;
  /** How long an answer (or a failure) is kept before the user is asked about again. */
  ttlMs?: number;
  /** Users kept; the oldest is dropped beyond it. */
  maxUsers?: number;
}

type UsersInfo = Pick<WebClient['users'], 'info'>;

/** `(client, userId) => locale`: cached per user; undefined when Slack does not say (in time). */
export interface SlackUserLocales {
  (client: { users: UsersInfo }, userId: string): Promise<Locale | undefined>;
  /** The user's locale if a lookup already answered, without waiting (an ack cannot wait for Slack). */
  known(userId: string): Locale | undefined;
}

export function slackUserLocales(o: SlackLocaleOptions = {}): SlackUserLocales {
  const timeoutMs = o.timeoutMs ?? 800;
  const ttlMs = o.ttlMs ?? 6 * 3600_000;
  const maxUsers = o.maxUsers ?? 5000;
  const cache = new Map<string, { until: number; locale: Promise<Locale | undefined>; settled?: Locale }>();
  const lookup = async (client: { users: UsersInfo }, userId: string) => {
    const now = Date.now();
    let hit = cache.get(userId);
    if (!hit || hit.until < now) {
      const entry: { until: number; locale: Promise<Locale | undefined>; settled?: Locale } = { until: now + ttlMs, locale: Promise.resolve(undefined) };
      entry.locale = client.users
        .info({ user: userId, include_locale: true })
        .then((r) => (entry.settled = localeFromTag(r.user?.locale)))
        .catch(() => undefined);
      hit = entry;
      cache.delete(userId);
      cache.set(userId, hit);
      if (cache.size > maxUsers) cache.delete(cache.keys().next().value!);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      return await Promise.race([hit.locale, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return Object.assign(lookup, {
    known: (userId: string) => {
      const hit = cache.get(userId);
      return hit && hit.until >= Date.now() ? hit.settled : undefined;
    },
  });
}
