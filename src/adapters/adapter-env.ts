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
  if (!env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) throw new Error('SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP mode) is');
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

