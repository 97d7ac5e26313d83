// `storage:` in the config: where the shared state lives. `sqlite` (the default) keeps it in files under
// data_dir for one bot; a Postgres URL keeps the registry, trusted keys, samples, digests, subscriptions
// and the audit trail in one database that several replicas share. The password is best left out of
// the URL (libpq's PGPASSWORD or ~/.pgpass are read), and is never logged either way.
import { z } from 'zod';
import { registerUrlPassword } from '../core/secret-scrub.js';

const PG_URL = /^postgres(ql)?:\/\/\S+$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

export const storageSchema = z.union([
  z.string().refine((s) => s === 'sqlite' || s === 'postgres' || PG_URL.test(s), 'sqlite, postgres (URL from GPU_DOCTOR_DATABASE_URL) or a postgres://... URL'),
  z
    .object({
      url: z.string().regex(PG_URL, 'a postgres://user@host:5432/db URL').optional(),
      // The environment variable holding the URL (a URL with a password belongs in the environment, not in the file).
      url_env: z.string().regex(ENV_NAME, 'an environment variable name such as DATABASE_URL').optional(),
      // How long a replica's sampling leases and digest claims live without renewal: a replica that stops
      // (crash, SIGKILL, network) has its hosts and unposted digest taken over within this.
      lease_s: z.number().int().min(1).max(3600).default(30),
      pool_max: z.number().int().min(1).max(100).default(5),
    })
    .strict(),
]);

export type StorageConfig = z.infer<typeof storageSchema>;

export type StorageChoice = { kind: 'sqlite' } | { kind: 'postgres'; url: string; leaseMs: number; poolMax: number };

export const DEFAULT_URL_ENV = 'GPU_DOCTOR_DATABASE_URL';

/** The storage the config asks for, with the URL taken from the environment where it says so. Throws a line naming what is missing. */
export function storageOf(storage: StorageConfig | undefined, env: NodeJS.ProcessEnv = process.env): StorageChoice {
  if (storage === undefined || storage === 'sqlite') return { kind: 'sqlite' };
  const o = typeof storage === 'string' ? (storage === 'postgres' ? { url_env: DEFAULT_URL_ENV } : { url: storage }) : storage;
  const name = o.url_env ?? (o.url ? undefined : DEFAULT_URL_ENV);
  const url = o.url ?? (name ? env[name] : undefined);
  if (!url) throw new Error(`storage: Postgres is configured but ${name ?? 'url'} is not set`);
  if (!PG_URL.test(url)) throw new Error(`storage: ${name ?? 'url'} is not a postgres://... URL`);
  // Its password is known to the scrubber from now on (a driver error quoting the URL is never shown or logged with it).
  registerUrlPassword(url);
  const leaseS = typeof storage === 'object' ? storage.lease_s : 30;
  return { kind: 'postgres', url, leaseMs: leaseS * 1000, poolMax: typeof storage === 'object' ? storage.pool_max : 5 };
}
