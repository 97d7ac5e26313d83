// Reads a group's progress file (scripts/stryker-progress-file.mjs writes it): shared by the summary and
// the resumed runs of scripts/mutation-run.mjs.
import { readFileSync } from 'node:fs';

/** A progress file's records, each mutant's latest (by place, mutator and replacement), and whether its last run ended. */
export function readProgress(path) {
  const latest = new Map();
  let ended = false;
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    const m = JSON.parse(line);
    ended = m.end === true;
    // A mutant is its place (start and end: nested expressions start alike) and change; a record from
    // before ends were recorded is its run's id.
    const end = m.endLine === undefined ? `id ${m.id}` : [m.endLine, m.endColumn];
    if (!ended) latest.set(JSON.stringify([m.fileName, m.line, m.column, end, m.mutatorName, m.replacement]), m);
  }
  return { mutants: [...latest.values()], ended };
}
