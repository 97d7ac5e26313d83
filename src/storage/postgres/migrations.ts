// The Postgres schema as an ordered list of migrations, applied at start in one transaction under a
// transaction-scoped advisory lock (two replicas starting together apply each migration once; the lock
// ends with the transaction, so it also works behind PgBouncer's transaction pooling). Applied versions
// are recorded in schema_migrations; a migration is never edited once released, only followed by another.
import type { Pool } from './connect.js';
import { inTransaction } from './connect.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'shared state: registry, trust, audit, samples, digests, subscriptions, sampling leases',
    sql: `
CREATE TABLE registry_hosts (
  name text PRIMARY KEY, host text NOT NULL, port integer, username text, identity_file text, added_at text NOT NULL
);
CREATE TABLE host_keys (name text PRIMARY KEY, fingerprint text NOT NULL, trusted_at text NOT NULL);
CREATE TABLE audit (
  id bigserial PRIMARY KEY, ts bigint NOT NULL, platform text NOT NULL, username text NOT NULL, channel text,
  command text NOT NULL, outcome text NOT NULL, ms double precision NOT NULL, replica text
);
CREATE INDEX audit_ts ON audit (ts);
-- Samples: the same compact rows as the SQLite store (src/storage/sqlite/watch.ts): process rows pid > 0, GPU rows
-- pid = 0 (start = total MiB), host RAM gpu = pid = -1 (start = total MiB, mib = used MiB).
CREATE TABLE watch_hosts (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE watch_samples (
  ts bigint NOT NULL, host_id integer NOT NULL, gpu integer NOT NULL, pid integer NOT NULL, start bigint NOT NULL,
  mib integer, util double precision,
  PRIMARY KEY (ts, host_id, gpu, pid, start)
);
CREATE TABLE watch_procs (
  host_id integer NOT NULL, pid integer NOT NULL, start bigint NOT NULL, username text NOT NULL, command text NOT NULL,
  PRIMARY KEY (host_id, pid, start)
);
-- One row per scheduled digest slot: claimed by one replica (INSERT .. ON CONFLICT), then posted. A claim
-- whose holder stopped renewing it (expires_at passed) is taken over by another replica.
CREATE TABLE digest_runs (
  schedule text NOT NULL, slot bigint NOT NULL,
  state text NOT NULL CHECK (state IN ('claimed', 'posted', 'skipped', 'failed')),
  holder text, attempts integer NOT NULL DEFAULT 0,
  claimed_at timestamptz, expires_at timestamptz, done_at timestamptz, note text,
  PRIMARY KEY (schedule, slot)
);
CREATE TABLE digest_reported (
  schedule text NOT NULL, key text NOT NULL, slope double precision NOT NULL, hours_to_full double precision,
  reported_at_ms bigint NOT NULL,
  PRIMARY KEY (schedule, key)
);
CREATE TABLE notify_subscriptions (
  id bigserial PRIMARY KEY, platform text NOT NULL, user_id text NOT NULL,
  size_mib integer NOT NULL, size text NOT NULL, count integer NOT NULL, shared boolean NOT NULL,
  created_ms bigint NOT NULL, expires_ms bigint NOT NULL,
  state text NOT NULL DEFAULT 'open', closed_ms bigint, note text
);
CREATE INDEX notify_subscriptions_open ON notify_subscriptions (state, platform, user_id);
CREATE TABLE watch_meta (key text PRIMARY KEY, value bigint NOT NULL);
-- Which replica samples which host: renewed while the holder lives, taken over once expired.
CREATE TABLE sample_leases (host text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL);
`,
  },
  {
    version: 2,
    name: 'feedback votes and /gpu whoami claims shared by replicas',
    sql: `
-- 👍 / 👎 (src/storage/postgres/feedback.ts): the same rows as the SQLite store's feedback.sqlite. The key
-- that turns a chat user into user_hash / voter_hash is one per database, so every replica hashes alike.
CREATE TABLE feedback_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE feedback_diagnoses (
  id text PRIMARY KEY, seq bigserial NOT NULL, ts bigint NOT NULL, platform text NOT NULL, channel text, user_hash text NOT NULL,
  rule text, category text, matched boolean NOT NULL, log_text text, log_file text
);
CREATE INDEX feedback_diagnoses_by_user ON feedback_diagnoses (platform, user_hash, ts);
CREATE INDEX feedback_diagnoses_by_ts ON feedback_diagnoses (ts);
CREATE TABLE feedback_votes (
  diagnosis_id text NOT NULL REFERENCES feedback_diagnoses (id) ON DELETE CASCADE, voter_hash text NOT NULL,
  vote smallint NOT NULL CHECK (vote IN (-1, 1)), ts bigint NOT NULL,
  PRIMARY KEY (diagnosis_id, voter_hash)
);
-- /gpu whoami claims (src/storage/postgres/claims.ts): the SQLite store's owner_claims. At most one active
-- mapping per unix user, host scope and platform, even with two admins approving on two replicas at once.
CREATE TABLE owner_claims (
  id bigserial PRIMARY KEY,
  unix_user text NOT NULL, host text, platform text NOT NULL, user_id text NOT NULL, display_name text,
  state text NOT NULL CHECK (state IN ('pending', 'active', 'rejected', 'replaced', 'withdrawn')),
  created_ms bigint NOT NULL, decided_ms bigint, decided_by text
);
CREATE INDEX owner_claims_state ON owner_claims (state, unix_user);
CREATE UNIQUE INDEX owner_claims_one_active ON owner_claims (unix_user, coalesce(host, ''), platform) WHERE state = 'active';
`,
  },
  {
    version: 3,
    name: '/gpu silence: silences of threshold and early alerts shared by replicas',
    sql: `
-- src/storage/postgres/silences.ts: the SQLite store's watch_silences. gpu NULL: the whole host.
CREATE TABLE watch_silences (
  id bigserial PRIMARY KEY, host text NOT NULL, gpu integer, until_ms bigint NOT NULL, created_ms bigint NOT NULL,
  by_platform text NOT NULL, by_user text NOT NULL, cancelled_ms bigint, cancelled_by text
);
CREATE INDEX watch_silences_until ON watch_silences (until_ms);
`,
  },
  {
    version: 4,
    name: 'threshold alerts: posted episodes shared by replicas and kept across restarts',
    sql: `
-- src/storage/postgres/watch.ts: the SQLite store's threshold_episodes. A row: this GPU's rule was posted
-- for the episode going since since_ms; deleted when a reading shows the condition ended.
CREATE TABLE threshold_episodes (
  host text NOT NULL, gpu integer NOT NULL, rule text NOT NULL, since_ms bigint NOT NULL, posted_ms bigint NOT NULL,
  PRIMARY KEY (host, gpu, rule)
);
`,
  },
];

/** Applies the migrations this database lacks; returns the versions applied now (none: up to date). */
export async function migrate(pool: Pool, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  return inTransaction(pool, async (c) => {
    await c.query("SELECT pg_advisory_xact_lock(hashtext('gpu-doctor schema_migrations'))");
    await c.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await c.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await c.query(m.sql);
      await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
