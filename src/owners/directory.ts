// Who a unix user on a host is in chat: the config's `owners:` (alice, or alice@gpu3 for one host), then
// approved `/gpu whoami` claims for what the config leaves open. Lookups are synchronous (SQLite) so the
// status table, digests and owner messages name people without another round trip.
import { OWNER_NAME, UNIX_USER, type Config } from '../core/config.js';
import { t } from '../core/i18n.js';
import { Mentions, type Mention } from '../core/mention.js';
import { HOST_NAME } from '../hosts/registry.js';
import type { ClaimPlatform, ClaimRow, ClaimStore } from './store.js';

export interface Owner {
  unixUser: string;
  /** The host the mapping is for; null: every host. */
  host: string | null;
  name?: string;
  slack?: string;
  discord?: string;
}

/**
 * What a claim names: `alice` or `alice@gpu3`, checked before it goes anywhere (never near a shell). Errors
 * and refusals here are made in English (reason.*); commands show them in the asker's language (localize()).
 */
export function parseOwnerKey(key: string): { unixUser: string; host: string | null } | { error: string } {
  if (typeof key !== 'string' || key.length > 100) return { error: t('en', 'reason.owner.tooLong') };
  const at = key.indexOf('@');
  const user = at < 0 ? key : key.slice(0, at);
  const host = at < 0 ? null : key.slice(at + 1);
  if (!UNIX_USER.test(user)) {
    const shown = user.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
    const why = /[A-Z]/.test(user) && UNIX_USER.test(user.toLowerCase()) ? t('en', 'reason.owner.lowerCase', { user: user.toLowerCase() }) : '';
    return { error: t('en', 'reason.owner.notUnixUser', { user: shown, why }) };
  }
  if (host !== null && !HOST_NAME.test(host)) return { error: t('en', 'reason.owner.badHost') };
  return { unixUser: user, host };
}

export type ClaimResult = { ok: true; claim: ClaimRow; existed: boolean } | { ok: false; reason: string };

/** The `/gpu whoami` side and the lookups, as commands and the watch use them. */
export interface OwnersService {
  /** The person behind a unix user on a host (host-scoped entries first), or null. */
  lookup(host: string, unixUser: string): Owner | null;
  claim(platform: string, userId: string, key: string, name?: string, now?: number): ClaimResult;
  approve(id: number, by: string, now?: number): { claim: ClaimRow; replaced: ClaimRow | null } | null;
  reject(id: number, by: string, now?: number): ClaimRow | null;
  pending(): ClaimRow[];
  /** A chat user's mappings from the config and their claims (pending and active). */
  mine(platform: string, userId: string): { config: Owner[]; claims: ClaimRow[] };
}

/** Pending claims one chat user may have open at once. */
export const MAX_PENDING_CLAIMS = 5;

const asPlatform = (p: string): ClaimPlatform | null => (p === 'slack' || p === 'discord' || p === 'console' ? p : null);

export class OwnerDirectory implements OwnersService {
  private config: Map<string, Owner>;
  /** Approved claims, read once and kept until this directory approves or rejects one (status asks per process). */
  private activeClaims: ClaimRow[] | null = null;

  constructor(
    owners: Config['owners'],
    private store: ClaimStore | null,
  ) {
    this.config = new Map(
      Object.entries(owners).map(([key, v]) => {
        const at = key.indexOf('@');
        const o: Owner = { unixUser: at < 0 ? key : key.slice(0, at), host: at < 0 ? null : key.slice(at + 1), ...v };
        return [key, o];
      }),
    );
  }

  lookup(host: string, unixUser: string): Owner | null {
    if (!UNIX_USER.test(unixUser)) return null;
    const fromConfig = this.config.get(`${unixUser}@${host}`) ?? this.config.get(unixUser);
    this.activeClaims ??= this.store?.active() ?? [];
    const claims = this.activeClaims.filter((c) => c.unixUser === unixUser && (c.host === host || c.host === null));
    // A host-scoped claim wins over an every-host one; the config wins over both, per platform.
    const claimed = (p: ClaimPlatform) => claims.find((c) => c.platform === p && c.host === host) ?? claims.find((c) => c.platform === p);
    const slack = fromConfig?.slack ?? claimed('slack')?.userId;
    const discord = fromConfig?.discord ?? claimed('discord')?.userId;
    if (!fromConfig && !slack && !discord) return null;
    const name = fromConfig?.name ?? claims.find((c) => c.name)?.name ?? undefined;
    return { unixUser, host: fromConfig?.host ?? null, ...(name ? { name } : {}), ...(slack ? { slack } : {}), ...(discord ? { discord } : {}) };
  }

  claim(platform: string, userId: string, key: string, name?: string, now = Date.now()): ClaimResult {
    const p = asPlatform(platform);
    if (!p || !this.store) return { ok: false, reason: t('en', 'reason.claim.platform') };
    const k = parseOwnerKey(key);
    if ('error' in k) return { ok: false, reason: k.error };
    if (name !== undefined && !OWNER_NAME.test(name))
      return { ok: false, reason: t('en', 'usage.whoami.displayName', { name: name.replace(/[^\x20-\x7e]/g, '?').slice(0, 40) }) };
    const configured = this.config.get(k.host ? `${k.unixUser}@${k.host}` : k.unixUser);
    if (configured && p !== 'console' && configured[p]) {
      return configured[p] === userId
        ? { ok: false, reason: t('en', 'reason.claim.alreadyYou', { key }) }
        : { ok: false, reason: t('en', 'reason.claim.mapped', { key }) };
    }
    if (this.store.pendingOf(p, userId).length >= MAX_PENDING_CLAIMS) return { ok: false, reason: t('en', 'reason.claim.tooMany', { n: MAX_PENDING_CLAIMS }) };
    return { ok: true, ...this.store.addPending({ unixUser: k.unixUser, host: k.host, platform: p, userId, name: name ?? null }, now) };
  }

  approve(id: number, by: string, now = Date.now()) {
    this.activeClaims = null;
    return this.store?.approve(id, by, now) ?? null;
  }

  reject(id: number, by: string, now = Date.now()) {
    this.activeClaims = null;
    return this.store?.reject(id, by, now) ?? null;
  }

  pending(): ClaimRow[] {
    return this.store?.pending() ?? [];
  }

  mine(platform: string, userId: string): { config: Owner[]; claims: ClaimRow[] } {
    const p = asPlatform(platform);
    const config = p && p !== 'console' ? [...this.config.values()].filter((o) => o[p] === userId) : [];
    return { config, claims: p ? (this.store?.of(p, userId) ?? []) : [] };
  }
}

/** The Mention for an owner: "Alice (alice)" or "alice"; a platform link keeps "(alice)" after it. */
export function ownerMention(o: Owner, link = false): Mention {
  return {
    name: o.name ? `${o.name} (${o.unixUser})` : o.unixUser,
    after: ` (${o.unixUser})`,
    ...(o.slack ? { slack: o.slack } : {}),
    ...(o.discord ? { discord: o.discord } : {}),
    ...(link ? { link: true } : {}),
  };
}

/** A unix user as text in a reply: the person's token where a mapping exists, else the user name. */
export function personOf(
  mentions: Mentions,
  owners: Pick<OwnersService, 'lookup'> | undefined,
  host: string,
  unixUser: string | null | undefined,
  link = false,
): string | null {
  if (!unixUser) return null;
  const o = owners?.lookup(host, unixUser);
  return o ? mentions.of(ownerMention(o, link)) : unixUser;
}
