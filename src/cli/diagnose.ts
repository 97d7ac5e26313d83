// `gpu-doctor diagnose [--json] [FILE|-]`
import { existsSync, statSync } from 'node:fs';
import { loadRuleBase } from '../diagnose/rule-base.js';
import { diagnose } from '../diagnose/diagnose.js';
import { readLogFile, readLogStream } from '../diagnose/input.js';
import { toJsonContract } from '../diagnose/contract.js';
import { diagnosisReply } from '../diagnose/reply.js';
import { localeFromEnv } from '../core/i18n.js';
import { renderText } from '../adapters/console/render.js';
import { parseArgs, UsageError } from './usage.js';
import { terminalSafeJson } from './json.js';

export async function diagnoseCli(args: string[]): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'] });
  if (positionals.length > 1) throw new UsageError('diagnose takes one FILE (or - for stdin)');
  const file = positionals[0] ?? '-';
  if (file !== '-' && (!existsSync(file) || !statSync(file).isFile())) throw new UsageError(`no such file: ${file.slice(0, 200)}`);
  const rules = await loadRuleBase();
  const input = file === '-' ? await readLogStream(process.stdin) : await readLogFile(file);
  // The text in the terminal's language (LC_ALL / LC_MESSAGES / LANG); --json is a contract and stays in English.
  const locale = flags.json ? undefined : localeFromEnv();
  const result = diagnose(input.text, rules, locale);
  if (flags.json) process.stdout.write(terminalSafeJson(toJsonContract(result, input)) + '\n');
  else process.stdout.write(renderText(diagnosisReply(result, input, locale)) + '\n');
  return 0;
}
