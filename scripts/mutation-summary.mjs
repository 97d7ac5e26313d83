#!/usr/bin/env node
// Prints the mutation score of each file in a Stryker JSON report (default reports/mutation/mutation.json):
// killed + timeout over all mutants that a test could reach or not (ignored and compile errors left out),
// and over the covered ones only (Stryker's "covered" score). With --floor=N, exits 1 when a file's
// score (over all mutants) is under N. Reads a JSON report, or a run's GROUP.progress.jsonl (the mutants
// tested so far: scripts/stryker-progress-file.mjs; each mutant's latest result, as a resumed run appends
// results; a file with no end line after its last result is a run stopped partway, which fails --floor);
// --survivors lists where each survivor is.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { readProgress } from './mutation-progress.mjs';

function mutantsByFile(path) {
  const text = readFileSync(path, 'utf8');
  if (!path.endsWith('.jsonl')) {
    const report = JSON.parse(text);
    return {
      ended: true,
      files: Object.fromEntries(Object.entries(report.files).map(([f, { mutants }]) => [f, mutants.map((m) => ({ ...m, line: m.location.start.line }))])),
    };
  }
  const { mutants, ended } = readProgress(path);
  const files = {};
  for (const m of mutants) (files[relative(process.cwd(), m.fileName)] ??= []).push(m);
  return { ended, files };
}

const args = process.argv.slice(2);
const floorArg = args.find((a) => a.startsWith('--floor='));
const floor = floorArg ? Number(floorArg.slice('--floor='.length)) : undefined;
const file = args.find((a) => !a.startsWith('--')) ?? 'reports/mutation/mutation.json';
const listSurvivors = args.includes('--survivors');
const { ended, files } = mutantsByFile(file);
const rows = [];
for (const [path, mutants] of Object.entries(files)) {
  const counted = mutants.filter((m) => !['Ignored', 'CompileError', 'RuntimeError'].includes(m.status));
  const detected = counted.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  const timedOut = counted.filter((m) => m.status === 'Timeout').length;
  const survived = counted.filter((m) => m.status === 'Survived').length;
  const noCov = counted.filter((m) => m.status === 'NoCoverage').length;
  const covered = counted.length - noCov;
  rows.push({
    path,
    score: counted.length ? (100 * detected) / counted.length : 100,
    coveredScore: covered ? (100 * detected) / covered : 100,
    detected,
    timedOut,
    survived,
    noCov,
    total: counted.length,
    missed: counted.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage').sort((a, b) => a.line - b.line),
  });
}
for (const r of rows) {
  console.log(
    `${r.score.toFixed(1).padStart(5)}% (covered ${r.coveredScore.toFixed(1)}%)  ${r.detected}/${r.total} killed (${r.timedOut} by timeout), ${r.survived} survived, ${r.noCov} no coverage  ${r.path}${ended ? '' : '  (run stopped partway: the mutants tested so far)'}`,
  );
  if (listSurvivors)
    for (const m of r.missed) console.log(`  ${r.path}:${m.line} ${m.status} ${m.mutatorName}: ${m.replacement.replace(/\s+/g, ' ').slice(0, 120)}`);
}
if (floor !== undefined && (!ended || rows.some((r) => r.score < floor))) process.exit(1);
