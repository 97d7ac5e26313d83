// `gpu-doctor knowledge check [--dir DIR]` and `gpu-doctor knowledge new ID --from FILE [--dir DIR]`.
import { resolve } from 'node:path';
import { DEFAULT_KNOWLEDGE_DIR } from '../diagnose/rule-base.js';
import { asksForHelp, parseArgs, UsageError } from './usage.js';

const USAGE = `usage: gpu-doctor knowledge check [--dir DIR]
       gpu-doctor knowledge new ID --from FILE [--dir DIR]
  check   the rule lint and every example: match/*.log must be the rule's first diagnosis, no-match/*.log must not
  new     scaffold DIR/ID/ (rule.yaml to complete, FILE as its match example, an empty no-match/)
  --dir   the knowledge folder (default: the one gpu-doctor runs with)`;

export async function knowledgeCli(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (!action || action === '--help' || action === '-h') {
    process.stdout.write(USAGE + '\n');
    return action ? 0 : 2;
  }
  if (asksForHelp(rest)) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs(rest, { values: ['dir', 'from'] });
  } catch (e) {
    throw new UsageError(`knowledge ${action.slice(0, 20)}: ${(e as Error).message}`);
  }
  const { flags, positionals } = parsed;
  const dir = resolve(flags.dir ?? DEFAULT_KNOWLEDGE_DIR);
  const { checkKnowledge, scaffoldRule } = await import('../diagnose/knowledge-check.js');
  if (action === 'check') {
    if (positionals.length) throw new UsageError('knowledge check takes no arguments besides --dir');
    const { rules, examples, problems } = await checkKnowledge(dir);
    for (const p of problems) process.stdout.write(`${p.rule}: ${p.problem}\n`);
    process.stdout.write(`${rules} rules, ${examples} examples, ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    return problems.length ? 1 : 0;
  }
  if (action === 'new') {
    const [id, ...extra] = positionals;
    if (!id || extra.length || !flags.from) throw new UsageError('usage: gpu-doctor knowledge new ID --from FILE [--dir DIR]');
    let made;
    try {
      made = scaffoldRule(dir, id, resolve(flags.from));
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    process.stdout.write(`created ${made.ruleDir}/ (rule.yaml, match/, no-match/)\n`);
    process.stdout.write(made.pattern ? `suggested pattern: ${made.pattern}\n` : 'no error line found: write the pattern yourself\n');
    process.stdout.write(`next: complete rule.yaml, add a near-miss log to no-match/, then run: gpu-doctor knowledge check --dir ${dir}\n`);
    return 0;
  }
  throw new UsageError(`knowledge: unknown action "${action.slice(0, 20)}" (check, new)`);
}
