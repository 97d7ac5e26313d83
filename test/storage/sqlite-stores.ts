// The SQLite stores in the config's data_dir, as src/app.ts chooses them without `storage:` Postgres:
// for tests and benchmarks that build the hosts service, the App or a watch store themselves.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import { resolvePath } from '../../src/core/config.js';
import type { HostsServiceOptions } from '../../src/hosts/service.js';
import type { AuditSink } from '../../src/ops/audit.js';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { HostRegistry } from '../../src/storage/sqlite/registry.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';

export function withSqliteRegistry(o: Omit<HostsServiceOptions, 'registry'>): HostsServiceOptions {
  return { ...o, registry: (configHosts) => new HostRegistry(resolvePath(o.config.data_dir, o.baseDir), configHosts) };
}

/** App.audit over data_dir/audit.sqlite. */
export function sqliteAudit(config: Config, baseDir: string): () => AuditSink {
  return () => AuditStore.inDataDir(resolvePath(config.data_dir, baseDir));
}

/** A leak-watch store of its own in a fresh temporary folder (as the bot has one in data_dir: a file a worker or chart child can open). */
export function tempWatchStore(): WatchStore {
  return WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-watch-')));
}
