// The chat adapters' registry, one line per platform. A new chat platform is its adapter folder
// (src/adapters/<name>/index.ts exporting its descriptor: environment, admin check, start), its line
// here, its entry in src/core/platform.ts, and its token variables in SECRET_ENV
// (src/core/secret-scrub.ts); test/adapters/registry.test.ts fails when these disagree.
import { parseEnvWith } from '../core/env.js';
import type { ServerPlatform } from '../core/platform.js';
import type { ChatAdapterDescriptor } from './platform-adapter.js';
import { discordAdapter } from './discord/index.js';
import { slackAdapter } from './slack/index.js';

export const CHAT_ADAPTERS: { readonly [P in ServerPlatform]: ChatAdapterDescriptor } = {
  slack: slackAdapter,
  discord: discordAdapter,
};

/** The console chat (src/adapters/console/): no server, no token; `gpu-doctor bot` runs it when no adapter is configured. */
export const TERMINAL_PLATFORM = 'console';

/**
 * Where the platforms named in core/platform.ts and the registered adapters disagree: a platform with no
 * adapter, an adapter for no platform, a descriptor under another name, a token the scrubber does not know.
 */
export function registryProblems(
  platforms: readonly string[],
  adapters: Readonly<Record<string, Pick<ChatAdapterDescriptor, 'name' | 'env'>>>,
  secretEnv: readonly string[],
): string[] {
  const problems: string[] = [];
  const registered = new Set([...Object.keys(adapters), TERMINAL_PLATFORM]);
  for (const p of platforms) if (!registered.has(p)) problems.push(`${p} is a ChatPlatform with no adapter in src/adapters/index.ts`);
  for (const p of registered) if (!platforms.includes(p)) problems.push(`${p} has an adapter but is not in CHAT_PLATFORMS (src/core/platform.ts)`);
  for (const [key, adapter] of Object.entries(adapters)) {
    if (adapter.name !== key) problems.push(`the adapter listed as ${key} says it is ${adapter.name}`);
    for (const s of adapter.env.secrets) if (!secretEnv.includes(s)) problems.push(`${key}'s ${s} is not in SECRET_ENV (src/core/secret-scrub.ts)`);
  }
  return problems;
}

export const registeredAdapters = (): ChatAdapterDescriptor[] => Object.values(CHAT_ADAPTERS);

/** The whole environment checked (each adapter's variables, then the general ones): start-up fails naming every bad key. */
export function parseEnv(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  return parseEnvWith(
    env,
    registeredAdapters().map((a) => a.env),
  );
}

/** Which chat the bot runs and why, from the environment alone: the one line it logs at start. */
export function chatModeOf(env: NodeJS.ProcessEnv): { mode: string; why: string } {
  const on = registeredAdapters().flatMap((a) => {
    const settings = a.settingsFrom(env);
    return settings === null ? [] : [a.modeOf(settings)];
  });
  if (!on.length) {
    const tokens = registeredAdapters().map((a) => a.token);
    return { mode: 'console chat', why: `${tokens.length === 2 ? `neither ${tokens.join(' nor ')}` : `none of ${tokens.join(', ')}`} is set` };
  }
  return { mode: on.map((m) => m.mode).join(' and '), why: on.map((m) => m.why).join('; ') };
}

/** What a person who set no chat token should set, every platform named. */
export const howToSetAChatToken = (): string =>
  registeredAdapters()
    .map((a) => a.howToSet)
    .join(', or ');
