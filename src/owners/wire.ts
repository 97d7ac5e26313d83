// The owner directory as the app builds it: the config's `owners:` plus the claims table in the
// registry's database under data_dir, or in Postgres when replicas share it (config `storage:`).
import type { Config } from '../config.js';
import { resolvePath } from '../core/config.js';
import { OwnerDirectory, type OwnersService } from './directory.js';
import { ClaimStore } from '../storage/sqlite/claims.js';
import type { ClaimStorage } from './claims.js';

export function ownersFromConfig(config: Config, baseDir: string, shared?: ClaimStorage): { service: OwnersService; close: () => void } {
  const store = shared ?? ClaimStore.inDataDir(resolvePath(config.data_dir, baseDir));
  return { service: new OwnerDirectory(config.owners, store), close: () => store.close() };
}
