// `gpu-doctor diagnose [--json] [FILE|-]`
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { loadRuleBase, type RuleBase } from '../diagnose/rule-base.js';
import { diagnose } from '../diagnose/diagnose.js';
import { readLogStream } from '../diagnose/input.js';
import { FileRefused, openRegularFile } from '../core/regular-file.js';
import { toJsonContract } from '../diagnose/contract.js';
import { diagnosisReply } from '../diagnose/reply.js';
import { localeFromEnv } from '../core/i18n.js';
import { renderText } from '../adapters/console/render.js';
import { parseArgs, UsageError } from './usage.js';
import { terminalSafeJson } from './json.js';

/** Where the CLI writes its answer: the process's stdout, or a caller's sink when run in process. */
export interface CliOutput {
  write(text: string): unknown;
}

/** The process's environment and stdin, or an in-process caller's (a paste and a language of its own, no global state changed). */
export interface CliInput {
  env?: NodeJS.ProcessEnv;
  stdin?: Readable;
}

/**
 * `rules` lets an in-process caller (the test corpus, thousands of cases) reuse one compiled rule base;
 * the command line always loads it.
 */
export async function diagnoseCli(args: string[], out: CliOutput = process.stdout, rules?: RuleBase, from: CliInput = {}): Promise<number> {
  const { flags, positionals } = parseArgs(args, { booleans: ['json'] });
  if (positionals.length > 1) throw new UsageError('diagnose takes one FILE (or - for stdin)');
  const file = positionals[0] ?? '-';
  // A regular file, checked on the descriptor it is read from (a FIFO or /dev/zero is refused at once).
  const fd = file === '-' ? null : openFile(file);
  const base = rules ?? (await loadRuleBase());
  const input = await readLogStream(fd === null ? (from.stdin ?? process.stdin) : createReadStream('', { fd }));
  // The text in the terminal's language (LC_ALL / LC_MESSAGES / LANG); --json is a contract and stays in English.
  const locale = flags.json ? undefined : localeFromEnv(from.env ?? process.env);
  const result = diagnose(input.text, base, locale);
  if (flags.json) out.write(terminalSafeJson(toJsonContract(result, input)) + '\n');
  else out.write(renderText(diagnosisReply(result, input, locale)) + '\n');
  return 0;
}

function openFile(file: string): number {
  try {
    return openRegularFile(file);
  } catch (e) {
    if (e instanceof FileRefused) throw new UsageError(e.message);
    throw e;
  }
}
