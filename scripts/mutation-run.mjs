#!/usr/bin/env node
// npm run test:mutation [-- GROUP ...]: Stryker over each group of scripts/mutation-groups.mjs in turn
// (all of them when none is named), each with only its own test files, its own sandbox and incremental
// file, at nice 19 so a shared machine stays usable; then every group's per-file scores. Exits non-zero
// when a run fails, a group has no complete result, or a file scores under 80%.
//
// npm run test:mutation -- --resume GROUP ...: appends to each group's progress file instead of starting
// over: a run stopped partway goes on from the last line it reached (Stryker tests mutants in source
// order), and a run that ended tests its survivors again (after tests were added); the summary keeps
// each mutant's latest result. Stryker writes its report and incremental file only when a run ends, so
// on a busy machine a whole group's run may never finish in one go.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { mutationGroups } from './mutation-groups.mjs';
import { readProgress } from './mutation-progress.mjs';

const FLOOR = 80;
const args = process.argv.slice(2);
const resume = args.includes('--resume');
const names = args.filter((a) => a !== '--resume');
for (const name of names) if (!mutationGroups[name]) throw new Error(`${name}: not one of ${Object.keys(mutationGroups).join(', ')}`);
const groups = names.length ? names : Object.keys(mutationGroups);
const progressOf = (name) => `reports/mutation/${name}.progress.jsonl`;

/**
 * The --mutate ranges of a resumed run: the rest of each file from the last line tested, or the survivors'
 * lines. Every mutant of a line in them is tested again, so their earlier records are dropped first.
 */
function resumeRanges(name) {
  const { mutants, ended } = readProgress(progressOf(name));
  const ranges = [];
  const retested = [];
  for (const file of mutationGroups[name].mutate) {
    const own = mutants.filter((m) => relative(process.cwd(), m.fileName) === file);
    const lines = readFileSync(file, 'utf8').split('\n').length;
    if (!ended) {
      // The last line reached may hold mutants not tested yet: from it on.
      const last = own.reduce((max, m) => Math.max(max, m.line), 1);
      ranges.push(`${file}:${last}-${lines}`);
      retested.push(...own.filter((m) => m.line >= last));
    } else {
      const missed = new Set(own.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage').map((m) => m.line));
      for (const line of missed) ranges.push(`${file}:${line}-${line}`);
      retested.push(...own.filter((m) => missed.has(m.line)));
    }
  }
  const kept = mutants.filter((m) => !retested.includes(m));
  if (ranges.length) writeFileSync(progressOf(name), kept.map((m) => `${JSON.stringify(m)}\n`).join(''));
  return ranges;
}

let failed = false;
for (const name of groups) {
  const started = Date.now();
  const env = { ...process.env, MUTATION_GROUP: name };
  const stryker = ['-n', '19', 'npx', 'stryker', 'run'];
  if (resume && existsSync(progressOf(name))) {
    const ranges = resumeRanges(name);
    if (!ranges.length) {
      console.log(`\n== ${name}: nothing to resume (no survivors)`);
      continue;
    }
    // Its own report, sandbox and incremental file; its results go to the group's progress file.
    Object.assign(env, { MUTATION_REPORT: `${name}.resumed`, MUTATION_PROGRESS_APPEND: progressOf(name) });
    stryker.push('--mutate', ranges.join(','));
    console.log(`\n== ${name} (resumed): ${ranges.join(', ')}`);
  } else console.log(`\n== ${name}: ${mutationGroups[name].mutate.join(', ')}`);
  const run = spawnSync('nice', stryker, { stdio: 'inherit', env });
  console.log(`== ${name}: exit ${run.status ?? run.signal}, ${Math.round((Date.now() - started) / 1000)} s`);
  if (run.status !== 0) failed = true;
}

/** A group's latest complete result: its progress file when its last run ended (it holds resumed runs too), else its JSON report. */
function resultOf(name) {
  const progress = progressOf(name);
  const json = `reports/mutation/${name}.json`;
  if (existsSync(progress) && readProgress(progress).ended) return progress;
  if (existsSync(json)) return json;
  return existsSync(progress) ? progress : undefined;
}

console.log('\nMutation scores (killed and timed out over all mutants):');
for (const name of Object.keys(mutationGroups)) {
  const result = resultOf(name);
  if (!result) {
    console.log(`  ${name}: no result (npm run test:mutation -- ${name})`);
    if (groups.includes(name)) failed = true;
    continue;
  }
  console.log(`  ${name} (${result}):`);
  const summary = spawnSync('node', ['scripts/mutation-summary.mjs', result, `--floor=${FLOOR}`], { stdio: 'inherit' });
  // Every module's figure is printed; the exit status is the groups of this run's.
  if (summary.status !== 0 && groups.includes(name)) failed = true;
}
process.exit(failed ? 1 : 0);
