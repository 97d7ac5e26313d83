// Bundles the CLI's own TypeScript into dist/main.mjs (packages stay external; the leak-digest worker
// thread as dist/findings-worker.mjs, the chart child process as dist/chart-render-child.mjs and the SQLite
// store's readers they import as dist/sqlite-findings-reader.mjs and dist/sqlite-chart-reader.mjs) and writes the validated
// rule base to dist/knowledge.json, so each CLI run starts in ~0.2 s instead of compiling TypeScript and
// loading YAML + zod. Run by `npm ci` (prepare). bin/gpu-doctor falls back to tsx whenever the bundle is
// older than the sources; the rule loader ignores the cache when any rule file changed.
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });

await build({
  entryPoints: {
    main: 'src/cli/main.ts',
    'rule-cache': 'scripts/rule-cache.ts',
    'findings-worker': 'src/watch/findings-worker.ts',
    'sqlite-findings-reader': 'src/storage/sqlite/findings-reader.ts',
    'chart-render-child': 'src/watch/chart-render-child.ts',
    'sqlite-chart-reader': 'src/storage/sqlite/chart-reader.ts',
  },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
const { writeRuleCache } = await import('../dist/rule-cache.mjs');
mkdirSync('dist', { recursive: true });
writeFileSync('dist/knowledge.json', JSON.stringify(await writeRuleCache()));
