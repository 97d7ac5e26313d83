#!/usr/bin/env node
// npm run test:mutation [-- GROUP ...]: Stryker over each group of scripts/mutation-groups.mjs in turn
// (all of them when none is named), each with only its own test files, its own sandbox and incremental
// file, at nice 10 so a shared machine stays usable; then the per-file scores of every group's report.
// Exits non-zero when a run fails or a file scores under 80%.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mutationGroups } from './mutation-groups.mjs';

const FLOOR = 80;
const names = process.argv.slice(2);
for (const name of names) if (!mutationGroups[name]) throw new Error(`${name}: not one of ${Object.keys(mutationGroups).join(', ')}`);
const groups = names.length ? names : Object.keys(mutationGroups);

let failed = false;
for (const name of groups) {
  const started = Date.now();
  console.log(`\n== ${name}: ${mutationGroups[name].mutate.join(', ')}`);
  const run = spawnSync('nice', ['-n', '10', 'npx', 'stryker', 'run'], { stdio: 'inherit', env: { ...process.env, MUTATION_GROUP: name } });
  console.log(`== ${name}: exit ${run.status ?? run.signal}, ${Math.round((Date.now() - started) / 1000)} s`);
  if (run.status !== 0) failed = true;
}

console.log('\nMutation scores (killed and timed out over all mutants):');
for (const name of groups) {
  const report = `reports/mutation/${name}.json`;
  if (!existsSync(report)) {
    console.log(`  ${name}: no report`);
    failed = true;
    continue;
  }
  const summary = spawnSync('node', ['scripts/mutation-summary.mjs', report, `--floor=${FLOOR}`], { stdio: 'inherit' });
  if (summary.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
