// One corpus case through the CLI (`gpu-doctor diagnose --json`): the first diagnosis of log NNNN in a
// group of test/fixtures/untuned/. Shared by the *-reports tests of each split.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = resolve(import.meta.dirname, '../../bin/gpu-doctor');
const ROOT = resolve(import.meta.dirname, '../fixtures/untuned');

export interface CaseDiagnosis {
  rule: string;
  category: string;
  facts: Record<string, unknown>;
  fixes: { summary: string; changes: Record<string, unknown>; env?: Record<string, string> }[];
}

/** The first diagnosis of a log file (none: undefined). */
export async function diagnoseFile(file: string): Promise<CaseDiagnosis | undefined> {
  const { stdout } = await run(process.execPath, [BIN, 'diagnose', '--json', file]);
  return (JSON.parse(stdout) as { diagnoses: CaseDiagnosis[] }).diagnoses[0];
}

/** The first diagnosis of case `n` (its number, "936") of a corpus group ("sealed"). */
export async function firstOfCase(group: string, n: string): Promise<CaseDiagnosis | undefined> {
  const file = readdirSync(resolve(ROOT, group)).find((f) => f.startsWith(`${n}-`));
  if (!file) throw new Error(`no case ${n} in ${group}/`);
  return diagnoseFile(resolve(ROOT, group, file));
}
