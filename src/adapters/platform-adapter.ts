// What each chat adapter folder exports (src/adapters/<name>/index.ts) and src/adapters/index.ts lists:
// how the environment turns it on, its admin check, and how it starts. The descriptor imports its chat
// library only in start(): @slack/bolt alone is ~40 MB of heap and brings undici 7, which replaces
// undici's process-global dispatcher, so a platform without its token costs nothing.
import type { Config } from '../config.js';
import type { EnvPart } from '../core/env.js';
import type { ServerPlatform } from '../core/platform.js';
import type { Reply } from '../core/reply.js';
import type { Health } from '../ops/health.js';
import type { AdapterDeps } from './common.js';

/** A connected adapter, as start-up and the scheduled posts (digests, owner messages) use it. */
export interface StartedAdapter {
  /** Its name in the start-up line and in RunningBots.adapters ("slack (http)", "discord"). */
  label: string;
  /** The port it listens on, if it does (Slack's HTTP mode). */
  port?: number;
  /** Waits for in-flight replies, then disconnects. */
  stop(): Promise<void>;
  postToChannel(channel: string, reply: Reply): Promise<void>;
  /** A direct message to a user (`/gpu notify`, owner messages). */
  postToUser(userId: string, reply: Reply): Promise<void>;
}

export interface ChatAdapterDescriptor<Settings = unknown> {
  name: ServerPlatform;
  /** Its environment variables and their checks; `secrets`: those holding a credential (src/core/secret-scrub.ts lists them too). */
  env: EnvPart & { secrets: readonly string[] };
  /** The variable whose presence turns the adapter on, for "no chat token set" (e.g. DISCORD_TOKEN). */
  token: string;
  /** What to set for it, said to a person who set nothing ("DISCORD_TOKEN for Discord"). */
  howToSet: string;
  /** Its settings from the environment, or null when it is not configured. */
  settingsFrom(env: NodeJS.ProcessEnv): Settings | null;
  /** How it runs with these settings and which variables made it so, for the start-up line. */
  modeOf(settings: Settings): { mode: string; why: string };
  /** Whether a user (with these role ids, where the platform has roles) is an admin by the config's admins.<name>. */
  isAdmin(config: Config, userId: string, roleIds?: Iterable<string>): boolean;
  start(deps: AdapterDeps & { health?: Health }, settings: Settings, env: NodeJS.ProcessEnv): Promise<StartedAdapter>;
}

/** A descriptor typed by its own settings, stored in the registry as the common shape. */
export const describeAdapter = <Settings>(d: ChatAdapterDescriptor<Settings>): ChatAdapterDescriptor => d;
