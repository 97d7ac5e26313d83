// One corpus case through the CLI's own entry (`gpu-doctor diagnose --json FILE`, src/cli/diagnose.ts): the first
// diagnosis of log NNNN in a group of test/fixtures/untuned/, or of any log file. Shared by the *-reports tests and
// the principle tests. It runs the command in this process with one compiled rule base: a process per case cost
// ~0.5 s of Node start-up and rule compiling each, most of the suite's diagnosis time, and told nothing new (the
// spawned CLI itself is tested in test/cli-args.test.ts, test/diagnose/cli-file-kinds.test.ts and others).
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { diagnoseCli } from '../../src/cli/diagnose.js';
import { loadRuleBase, type RuleBase } from '../../src/diagnose/rule-base.js';

let rules: Promise<RuleBase> | undefined;
const ROOT = resolve(import.meta.dirname, '../fixtures/untuned');

export interface CaseDiagnosis {
  rule: string;
  category: string;
  facts: Record<string, unknown>;
  fixes: { summary: string; changes: Record<string, unknown>; env?: Record<string, string> }[];
}

/** The first diagnosis of a log file (none: undefined). */
export async function diagnoseFile(file: string): Promise<CaseDiagnosis | undefined> {
  rules ??= loadRuleBase();
  let stdout = '';
  const code = await diagnoseCli(['--json', file], { write: (t: string) => (stdout += t) }, await rules);
  if (code !== 0) throw new Error(`gpu-doctor diagnose --json ${file} exited ${code}`);
  return (JSON.parse(stdout) as { diagnoses: CaseDiagnosis[] }).diagnoses[0];
}

/** The first diagnosis of case `n` (its number, "936") of a corpus group ("sealed"). */
export async function firstOfCase(group: string, n: string): Promise<CaseDiagnosis | undefined> {
  const file = readdirSync(resolve(ROOT, group)).find((f) => f.startsWith(`${n}-`));
  if (!file) throw new Error(`no case ${n} in ${group}/`);
  return diagnoseFile(resolve(ROOT, group, file));
}
