// Worker entry when running from the TypeScript sources (tsx, vitest): Node 20 does not apply the
// parent's `--import tsx` to a worker's entry module, so register tsx here, then load the real entry.
// From the bundle, dist/findings-worker.mjs is the entry and this file is not used.
import { register } from 'tsx/esm/api';

register();
await import('./findings-worker.ts');
