// One corpus case through the CLI's own entry (`gpu-doctor diagnose --json FILE`, src/cli/diagnose.ts): the first
// diagnosis of log NNNN in a group of test/fixtures/untuned/, or of any log file. Shared by the *-reports tests and
// the principle tests. It runs the command in this process with one compiled rule base: a process per case cost
// ~0.5 s of Node start-up and rule compiling each, most of the suite's diagnosis time, and told nothing new (the
// spawned CLI itself is tested in test/cli-args.test.ts, test/diagnose/cli-file-kinds.test.ts and others).
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
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

/**
 * What `gpu-doctor diagnose ARGS` prints, run in this process: `paste` is its stdin (for `-`), `locale` the
 * terminal's language its text reply is rendered in (as LC_ALL would set it; the process's own env is untouched).
 */
export async function diagnoseOutput(args: string[], opts: { paste?: string; locale?: 'en' | 'zh' } = {}): Promise<string> {
  rules ??= loadRuleBase();
  let stdout = '';
  const env = { LC_ALL: opts.locale === 'zh' ? 'zh_CN.UTF-8' : 'en_US.UTF-8' };
  const stdin = Readable.from(opts.paste === undefined ? [] : [Buffer.from(opts.paste)]);
  const code = await diagnoseCli(args, { write: (t: string) => (stdout += t) }, await rules, { env, stdin });
  if (code !== 0) throw new Error(`gpu-doctor diagnose ${args.join(' ')} exited ${code}`);
  return stdout;
}

/** Every diagnosis of a log file (`-`: of `paste`), best first, as the JSON contract gives them. */
export async function diagnoseAll(file: string, paste?: string): Promise<CaseDiagnosis[]> {
  return (JSON.parse(await diagnoseOutput(['--json', file], { paste })) as { diagnoses: CaseDiagnosis[] }).diagnoses;
}

/** The first diagnosis of a log file (none: undefined). */
export async function diagnoseFile(file: string): Promise<CaseDiagnosis | undefined> {
  return (await diagnoseAll(file))[0];
}

/** The first diagnosis of a pasted text, read from stdin as `gpu-doctor diagnose --json -` reads it (none: undefined). */
export async function diagnosePaste(text: string): Promise<CaseDiagnosis | undefined> {
  return (await diagnoseAll('-', text))[0];
}

/** The first diagnosis of case `n` (its number, "936") of a corpus group ("sealed"). */
export async function firstOfCase(group: string, n: string): Promise<CaseDiagnosis | undefined> {
  const file = readdirSync(resolve(ROOT, group)).find((f) => f.startsWith(`${n}-`));
  if (!file) throw new Error(`no case ${n} in ${group}/`);
  return diagnoseFile(resolve(ROOT, group, file));
}
