// The owner directory as the app builds it: the config's `owners:` plus the claims store src/app.ts chose
// (the registry's database under data_dir, or Postgres when replicas share it: config `storage:`).
import type { Config } from '../config.js';
import { OwnerDirectory, type OwnersService } from './directory.js';
import type { ClaimStorage } from './claims.js';

export function ownersFromConfig(config: Config, claims: ClaimStorage): { service: OwnersService; close: () => void } {
  return { service: new OwnerDirectory(config.owners, claims), close: () => claims.close() };
}
