// Who a unix user on a host is in chat: the config's `owners:` (alice, or alice@gpu3 for one host), then
// approved `/gpu whoami` claims for what the config leaves open. Lookups are synchronous, from the approved
// claims read once (SQLite) or at refresh() (Postgres shared by replicas: the command registry refreshes
// before every command, the digests before each run), so the status table, digests and owner messages
// name people without another round trip.
import { isChatPlatform } from '../core/platform.js';
import type { Config } from '../config.js';
import { OWNER_NAME, UNIX_USER } from '../core/config.js';
import { message, type Message } from '../core/message.js';
import { Mentions, type Mention } from '../core/mention.js';
import { HOST_NAME } from '../hosts/registry.js';
import type { ClaimPlatform, ClaimRow, ClaimStorage } from './claims.js';

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
 * and refusals here are catalogue messages (reason.*); commands render them in the asker's language.
 */
export function parseOwnerKey(key: string): { unixUser: string; host: string | null } | { error: Message } {
  if (typeof key !== 'string' || key.length > 100) return { error: message('reason.owner.tooLong') };
  const at = key.indexOf('@');
  const user = at < 0 ? key : key.slice(0, at);
  const host = at < 0 ? null : key.slice(at + 1);
  if (!UNIX_USER.test(user)) {
    const shown = user.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
    const why = /[A-Z]/.test(user) && UNIX_USER.test(user.toLowerCase()) ? message('reason.owner.lowerCase', { user: user.toLowerCase() }) : '';
    return { error: message('reason.owner.notUnixUser', { user: shown, why }) };
  }
  if (host !== null && !HOST_NAME.test(host)) return { error: message('reason.owner.badHost') };
  return { unixUser: user, host };
}

export type ClaimResult = { ok: true; claim: ClaimRow; existed: boolean } | { ok: false; reason: Message };

/**
 * A claim against the config's owner of its unix user, for the admin deciding it: a display name is only
 * what the claimant typed, the platform account is who they are.
 * - `matches`: the config maps the unix user to this very account;
 * - `differs`: the config maps it to another account on the claim's platform;
 * - `unverified`: the config names an owner but no account on this platform to compare with;
 * - `none`: the config has no owner for it.
 * `sameName`: the name given is the configured owner's name while the account is not shown to be theirs.
 */
export type ClaimCheck =
  { kind: 'matches' } | { kind: 'none' } | { kind: 'differs'; owner: Owner; sameName: boolean } | { kind: 'unverified'; owner: Owner; sameName: boolean };

/** The `/gpu whoami` side and the lookups, as commands and the watch use them. */
export interface OwnersService {
  /** The person behind a unix user on a host (host-scoped entries first), or null. */
  lookup(host: string, unixUser: string): Owner | null;
  /** Reads the approved claims again (what another replica approved), for lookup(). */
  refresh?(): Promise<void>;
  claim(platform: string, userId: string, key: string, name?: string, now?: number): Promise<ClaimResult>;
  approve(id: number, by: string, now?: number): Promise<{ claim: ClaimRow; replaced: ClaimRow | null } | null>;
  reject(id: number, by: string, now?: number): Promise<ClaimRow | null>;
  pending(): Promise<ClaimRow[]>;
  /** A chat user's mappings from the config and their claims (pending and active). */
  mine(platform: string, userId: string): Promise<{ config: Owner[]; claims: ClaimRow[] }>;
  /** How a claim compares with the config's owner of its unix user (shown with each pending claim). */
  check(claim: ClaimRow): ClaimCheck;
}

// The owners service joins the commands' Services from here (registration): the core names no wing.
declare module '../core/services.js' {
  interface Services {
    /** unix user on a host -> the person in chat (config `owners:` and approved `/gpu whoami` claims). */
    owners?: OwnersService;
  }
}

/** Pending claims one chat user may have open at once. */
export const MAX_PENDING_CLAIMS = 5;

const asPlatform = (p: string): ClaimPlatform | null => (isChatPlatform(p) ? p : null);

export class OwnerDirectory implements OwnersService {
  private config: Map<string, Owner>;
  /**
   * Approved claims, read once and kept until this directory approves or rejects one or refresh() reads
   * them again (status asks per process).
   */
  private activeClaims: ClaimRow[] | null = null;
  /** A read of them in flight (lookup() before the first refresh() with Postgres). */
  private reading: Promise<void> | null = null;

  constructor(
    owners: Config['owners'],
    private store: ClaimStorage | null,
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
    const claims = this.approved().filter((c) => c.unixUser === unixUser && (c.host === host || c.host === null));
    // A host-scoped claim wins over an every-host one; the config wins over both, per platform.
    const claimed = (p: ClaimPlatform) => claims.find((c) => c.platform === p && c.host === host) ?? claims.find((c) => c.platform === p);
    const slack = fromConfig?.slack ?? claimed('slack')?.userId;
    const discord = fromConfig?.discord ?? claimed('discord')?.userId;
    if (!fromConfig && !slack && !discord) return null;
    const name = fromConfig?.name ?? claims.find((c) => c.name)?.name ?? undefined;
    return { unixUser, host: fromConfig?.host ?? null, ...(name ? { name } : {}), ...(slack ? { slack } : {}), ...(discord ? { discord } : {}) };
  }

  /** The approved claims as last read; a store that answers later (Postgres) fills them in when it does. */
  private approved(): ClaimRow[] {
    if (this.activeClaims) return this.activeClaims;
    if (this.reading) return [];
    const read = this.store?.active() ?? [];
    if (Array.isArray(read)) return (this.activeClaims = read);
    this.reading = read
      .then(
        (rows) => void (this.activeClaims ??= rows),
        () => undefined,
      )
      .finally(() => (this.reading = null));
    return [];
  }

  async refresh(): Promise<void> {
    if (this.store) this.activeClaims = await this.store.active();
  }

  async claim(platform: string, userId: string, key: string, name?: string, now = Date.now()): Promise<ClaimResult> {
    const p = asPlatform(platform);
    if (!p || !this.store) return { ok: false, reason: message('reason.claim.platform') };
    const k = parseOwnerKey(key);
    if ('error' in k) return { ok: false, reason: k.error };
    if (name !== undefined && !OWNER_NAME.test(name))
      return { ok: false, reason: message('usage.whoami.displayName', { name: name.replace(/[^\x20-\x7e]/g, '?').slice(0, 40) }) };
    const configured = this.config.get(k.host ? `${k.unixUser}@${k.host}` : k.unixUser);
    if (configured && p !== 'console' && configured[p]) {
      return configured[p] === userId
        ? { ok: false, reason: message('reason.claim.alreadyYou', { key }) }
        : { ok: false, reason: message('reason.claim.mapped', { key }) };
    }
    if ((await this.store.pendingOf(p, userId)).length >= MAX_PENDING_CLAIMS)
      return { ok: false, reason: message('reason.claim.tooMany', { n: MAX_PENDING_CLAIMS }) };
    return { ok: true, ...(await this.store.addPending({ unixUser: k.unixUser, host: k.host, platform: p, userId, name: name ?? null }, now)) };
  }

  async approve(id: number, by: string, now = Date.now()) {
    if (!this.store) return null;
    const r = await this.store.approve(id, by, now);
    await this.reread();
    return r;
  }

  async reject(id: number, by: string, now = Date.now()) {
    if (!this.store) return null;
    const r = await this.store.reject(id, by, now);
    await this.reread();
    return r;
  }

  /** After a change here: the approved claims as they are now (a failed read is retried at the next lookup). */
  private async reread(): Promise<void> {
    this.activeClaims = null;
    await this.refresh().catch(() => undefined);
  }

  async pending(): Promise<ClaimRow[]> {
    return (await this.store?.pending()) ?? [];
  }

  check(claim: ClaimRow): ClaimCheck {
    // The entry that would name this unix user where the claim applies: its host's, else the every-host one.
    const owner = (claim.host ? this.config.get(`${claim.unixUser}@${claim.host}`) : undefined) ?? this.config.get(claim.unixUser);
    if (!owner) return { kind: 'none' };
    const account = claim.platform === 'console' ? owner.unixUser : owner[claim.platform];
    if (account === claim.userId) return { kind: 'matches' };
    const sameName = !!owner.name && !!claim.name && owner.name.trim().toLowerCase() === claim.name.trim().toLowerCase();
    return account ? { kind: 'differs', owner, sameName } : { kind: 'unverified', owner, sameName };
  }

  async mine(platform: string, userId: string): Promise<{ config: Owner[]; claims: ClaimRow[] }> {
    const p = asPlatform(platform);
    const config = p && p !== 'console' ? [...this.config.values()].filter((o) => o[p] === userId) : [];
    return { config, claims: p && this.store ? await this.store.of(p, userId) : [] };
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
