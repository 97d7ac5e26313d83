// Who is an admin on Discord: a user id or one of the member's role ids in the config's admins.discord.
import type { Config } from '../../config.js';

export function isDiscordAdmin(config: Config, userId: string, roleIds: Iterable<string> = []): boolean {
  const admins = new Set(config.admins.discord);
  if (admins.has(userId)) return true;
  for (const r of roleIds) if (admins.has(r)) return true;
  return false;
}

/** A member's role ids as discord.js gives them: a raw API member (guild not cached) or a GuildMember. */
export function rolesOf(member: unknown): string[] {
  const m = member as { roles?: string[] | { cache?: Map<string, unknown> }; _roles?: string[] } | null;
  if (!m?.roles) return [];
  if (Array.isArray(m.roles)) return m.roles; // raw API member (guild not cached)
  if (Array.isArray(m._roles)) return m._roles; // GuildMember: role IDs as sent, cached or not
  return m.roles.cache ? [...m.roles.cache.keys()] : [];
}
