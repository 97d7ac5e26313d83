// The environment half of the settings (secrets and ports), validated with zod like the config file:
// start-up fails naming every bad key, and never prints a value (they are secrets). The keys every
// process reads are here; each chat adapter adds its own (src/adapters/<name>/index.ts, composed by
// parseEnv in src/adapters/index.ts), so the core names no platform's variables.
import { z } from 'zod';
import { ConfigError, listenHost } from './config.js';

export const blankIsUnset = (schema: z.ZodType) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
export const portNumber = z.coerce.number().int().min(0).max(65535);

export const generalEnvShape = {
  HEALTH_PORT: blankIsUnset(portNumber),
  HEALTH_HOST: blankIsUnset(listenHost),
  LOG_LEVEL: blankIsUnset(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
};

/** A part of the environment's schema: its keys, and a check across them (one key needing another). */
export interface EnvPart {
  shape: Record<string, z.ZodType>;
  check?: (env: Record<string, unknown>, ctx: z.RefinementCtx) => void;
}

/** The environment checked against the general keys and every part given (the chat adapters' keys first). */
export function parseEnvWith(env: NodeJS.ProcessEnv, parts: readonly EnvPart[]): Record<string, unknown> {
  const schema = z.object(Object.assign({}, ...parts.map((p) => p.shape), generalEnvShape) as Record<string, z.ZodType>).superRefine((value, ctx) => {
    for (const part of parts) part.check?.(value, ctx);
  });
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`environment is not valid:\n${problems.join('\n')}`);
  }
  return parsed.data;
}
