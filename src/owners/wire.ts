// The owner directory as the app builds it: the config's `owners:` plus the claims table in the
// registry's database under data_dir.
import { resolvePath, type Config } from '../core/config.js';
import { OwnerDirectory, type OwnersService } from './directory.js';
import { ClaimStore } from './store.js';

export function ownersFromConfig(config: Config, baseDir: string): { service: OwnersService; close: () => void } {
  const store = ClaimStore.inDataDir(resolvePath(config.data_dir, baseDir));
  return { service: new OwnerDirectory(config.owners, store), close: () => store.close() };
}
