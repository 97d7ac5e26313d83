// Which chat adapters the environment configures, read without loading either chat library (start.ts
// imports an adapter's module only when its token is set).

export interface SlackEnv {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  port?: number;
}

export function slackEnvFrom(env: NodeJS.ProcessEnv): SlackEnv | null {
  if (!env.SLACK_BOT_TOKEN) return null;
  if (!env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET)
    throw new Error('SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP mode) is');
  return {
    botToken: env.SLACK_BOT_TOKEN,
    appToken: env.SLACK_APP_TOKEN || undefined,
    signingSecret: env.SLACK_SIGNING_SECRET || undefined,
    apiUrl: env.SLACK_API_URL || undefined,
    port: env.PORT ? Number(env.PORT) : 3000,
  };
}

export interface DiscordEnv {
  token: string;
  applicationId?: string;
  apiUrl?: string;
}

export function discordEnvFrom(env: NodeJS.ProcessEnv): DiscordEnv | null {
  if (!env.DISCORD_TOKEN) return null;
  return { token: env.DISCORD_TOKEN, applicationId: env.DISCORD_APPLICATION_ID || undefined, apiUrl: env.DISCORD_API_URL || undefined };
}

/** Which chat the bot runs and why, from the environment alone: the one line it logs at start. */
export function chatModeOf(env: NodeJS.ProcessEnv): { mode: string; why: string } {
  const slack = slackEnvFrom(env);
  const discord = discordEnvFrom(env);
  const modes: string[] = [];
  const why: string[] = [];
  if (slack?.appToken) {
    modes.push('Slack Socket Mode');
    why.push('SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set');
  } else if (slack) {
    modes.push(`Slack HTTP mode (port ${slack.port ?? 3000}, /slack/events)`);
    why.push('SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set, SLACK_APP_TOKEN is not');
  }
  if (discord) {
    modes.push('Discord');
    why.push('DISCORD_TOKEN is set');
  }
  if (!modes.length) return { mode: 'console chat', why: 'neither SLACK_BOT_TOKEN nor DISCORD_TOKEN is set' };
  return { mode: modes.join(' and '), why: why.join('; ') };
}
