// Discord's settings from the environment, read without loading discord.js.
import { z } from 'zod';
import { blankIsUnset, type EnvPart } from '../../core/env.js';

export interface DiscordEnv {
  token: string;
  applicationId?: string;
  apiUrl?: string;
}

export const discordEnvPart: EnvPart = {
  shape: {
    DISCORD_TOKEN: blankIsUnset(z.string().min(20, 'a bot token')),
    DISCORD_APPLICATION_ID: blankIsUnset(z.string().regex(/^\d{5,25}$/, 'a numeric application ID')),
    DISCORD_GUILD_ID: blankIsUnset(z.string().regex(/^\d{5,25}$/, 'a numeric guild ID')),
    DISCORD_API_URL: blankIsUnset(z.string().url('a URL such as https://discord.com/api')),
  },
};

export function discordEnvFrom(env: NodeJS.ProcessEnv): DiscordEnv | null {
  if (!env.DISCORD_TOKEN) return null;
  return { token: env.DISCORD_TOKEN, applicationId: env.DISCORD_APPLICATION_ID || undefined, apiUrl: env.DISCORD_API_URL || undefined };
}
