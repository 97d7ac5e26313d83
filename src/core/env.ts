// The environment half of the settings (secrets and ports), validated with zod like the config file:
// start-up fails naming every bad key, and never prints a value (they are secrets).
import { z } from 'zod';
import { ConfigError, listenHost } from './config.js';

const blankIsUnset = (schema: z.ZodType) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const port = z.coerce.number().int().min(0).max(65535);

export const envSchema = z
  .object({
    SLACK_BOT_TOKEN: blankIsUnset(z.string().regex(/^xoxb-/, 'a bot token starting with xoxb-')),
    SLACK_APP_TOKEN: blankIsUnset(z.string().regex(/^xapp-/, 'an app-level token starting with xapp-')),
    SLACK_SIGNING_SECRET: blankIsUnset(z.string().regex(/^[A-Za-z0-9-]{16,}$/, "the signing secret from the app's Basic Information page")),
    SLACK_API_URL: blankIsUnset(z.string().url('a URL such as https://slack.com/api/')),
    PORT: blankIsUnset(port),
    DISCORD_TOKEN: blankIsUnset(z.string().min(20, 'a bot token')),
    DISCORD_APPLICATION_ID: blankIsUnset(z.string().regex(/^\d{5,25}$/, 'a numeric application ID')),
    DISCORD_GUILD_ID: blankIsUnset(z.string().regex(/^\d{5,25}$/, 'a numeric guild ID')),
    DISCORD_API_URL: blankIsUnset(z.string().url('a URL such as https://discord.com/api')),
    HEALTH_PORT: blankIsUnset(port),
    HEALTH_HOST: blankIsUnset(listenHost),
    LOG_LEVEL: blankIsUnset(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  })
  .superRefine((env, ctx) => {
    if (env.SLACK_BOT_TOKEN && !env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['SLACK_APP_TOKEN'],
        message: 'SLACK_BOT_TOKEN is set: also set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode)',
      });
    }
  });

export type Env = z.infer<typeof envSchema>;

export function parseEnv(env: NodeJS.ProcessEnv = process.env): Env {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`environment is not valid:\n${problems.join('\n')}`);
  }
  return parsed.data;
}
