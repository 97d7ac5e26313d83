// Slack's settings from the environment, read without loading @slack/bolt.
import { z } from 'zod';
import { blankIsUnset, portNumber, type EnvPart } from '../../core/env.js';

export interface SlackEnv {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  port?: number;
}

export const slackEnvPart: EnvPart = {
  shape: {
    SLACK_BOT_TOKEN: blankIsUnset(z.string().regex(/^xoxb-/, 'a bot token starting with xoxb-')),
    SLACK_APP_TOKEN: blankIsUnset(z.string().regex(/^xapp-/, 'an app-level token starting with xapp-')),
    SLACK_SIGNING_SECRET: blankIsUnset(z.string().regex(/^[A-Za-z0-9-]{16,}$/, "the signing secret from the app's Basic Information page")),
    SLACK_API_URL: blankIsUnset(z.string().url('a URL such as https://slack.com/api/')),
    PORT: blankIsUnset(portNumber),
  },
  check(env, ctx) {
    if (env.SLACK_BOT_TOKEN && !env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['SLACK_APP_TOKEN'],
        message: 'SLACK_BOT_TOKEN is set: also set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode)',
      });
    }
  },
};

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
