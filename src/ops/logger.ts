// Structured logs (pino). Secrets are redacted by key and, as a last line of defence, by value:
// every token found in the environment is scrubbed from any log line that would contain it.
// Logs go to stderr (stdout is the console chat's conversation), one JSON object a line with an ISO
// time; on a terminal they are pretty-printed (pino-pretty, in-process: no worker thread to bundle).
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { SECRET_ENV, scrub } from '../core/secret-scrub.js';

export type { Logger };

export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  return SECRET_ENV.map((k) => env[k]).filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

/**
 * Replaces every credential the bot holds (src/core/secret-scrub.ts: chat tokens, Prometheus and Postgres
 * credentials, in their base64 and escaped forms too) and `secrets` in a string, for errors that are shown or logged.
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  return scrub(text, secrets);
}

export interface LoggerOptions {
  level?: string;
  /** Where the lines go; stderr when unset. */
  destination?: pino.DestinationStream;
  /** Human-readable lines instead of JSON; default: when the destination is stderr and stderr is a terminal. */
  pretty?: boolean;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = secretValues();
  const readable = options.pretty ?? (!options.destination && process.stderr.isTTY === true);
  const sink = options.destination ?? pino.destination(2);
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { app: 'gpu-doctor' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'token',
          'botToken',
          'appToken',
          'signingSecret',
          '*.token',
          '*.authorization',
          '*.Authorization',
          'headers.authorization',
          'req.headers.authorization',
          'config.token',
          'clientOptions.token',
        ],
        censor: '[redacted]',
      },
      hooks: {
        streamWrite: (s: string) => scrubSecrets(s, secrets),
      },
    },
    // The time is already ISO 8601 (UTC); pino-pretty prints it as it is.
    readable ? pretty({ destination: sink, sync: true, translateTime: false, ignore: 'pid,hostname,app', singleLine: true }) : sink,
  );
}
