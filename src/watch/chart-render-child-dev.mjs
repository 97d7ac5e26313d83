// Child process entry when running from the TypeScript sources (tsx, vitest): the child is a plain node
// process, so register tsx here, then load the real entry. From the bundle, dist/chart-render-child.mjs
// is the entry and this file is not used.
import { register } from 'tsx/esm/api';

register();
await import('./chart-render-child.ts');
