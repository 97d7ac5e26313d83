// Structured logs (pino). Secrets are redacted by key and, as a last line of defence, by value:
// every token found in the environment is scrubbed from any log line that would contain it.
import pino, { type Logger } from 'pino';

export type { Logger };

const SECRET_ENV = ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'DISCORD_TOKEN'];

export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  return SECRET_ENV.map((k) => env[k]).filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

/** Replaces every known secret value in a string (for errors that are shown or logged). */
export function scrubSecrets(text: string, secrets = secretValues()): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out.replace(/\b(xox[abprs]|xapp)-[A-Za-z0-9-]{8,}/g, '[redacted]');
}

export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  const secrets = secretValues();
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { app: 'gpu-doctor' },
      redact: {
        paths: ['token', 'botToken', 'appToken', 'signingSecret', '*.token', '*.authorization', '*.Authorization', 'headers.authorization', 'req.headers.authorization', 'config.token', 'clientOptions.token'],
        censor: '[redacted]',
      },
      hooks: {
        streamWrite: (s: string) => scrubSecrets(s, secrets),
      },
    },
    options.destination,
  );
}
