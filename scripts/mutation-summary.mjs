#!/usr/bin/env node
// Prints the mutation score of each file in a Stryker JSON report (default reports/mutation/mutation.json):
// killed + timeout over all mutants that a test could reach or not (ignored and compile errors left out).
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'reports/mutation/mutation.json';
const report = JSON.parse(readFileSync(file, 'utf8'));
const rows = [];
for (const [path, { mutants }] of Object.entries(report.files)) {
  const counted = mutants.filter((m) => !['Ignored', 'CompileError', 'RuntimeError'].includes(m.status));
  const detected = counted.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  const survived = counted.filter((m) => m.status === 'Survived').length;
  const noCov = counted.filter((m) => m.status === 'NoCoverage').length;
  rows.push({ path, score: counted.length ? (100 * detected) / counted.length : 100, detected, survived, noCov, total: counted.length });
}
for (const r of rows)
  console.log(`${r.score.toFixed(1).padStart(5)}%  ${r.detected}/${r.total} killed, ${r.survived} survived, ${r.noCov} no coverage  ${r.path}`);
