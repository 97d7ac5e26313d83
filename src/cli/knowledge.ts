// `gpu-doctor knowledge check [--dir DIR]` and `gpu-doctor knowledge new ID --from FILE [--dir DIR]`.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_KNOWLEDGE_DIR } from '../diagnose/rule-base.js';
import { UsageError } from './usage.js';

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
  let parsed;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, strict: true, options: { dir: { type: 'string' }, from: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    throw new UsageError(`knowledge ${action.slice(0, 20)}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const dir = resolve(parsed.values.dir ?? DEFAULT_KNOWLEDGE_DIR);
  const { checkKnowledge, scaffoldRule } = await import('../diagnose/knowledge-check.js');
  if (action === 'check') {
    if (parsed.positionals.length) throw new UsageError('knowledge check takes no arguments besides --dir');
    const { rules, examples, problems } = await checkKnowledge(dir);
    for (const p of problems) process.stdout.write(`${p.rule}: ${p.problem}\n`);
    process.stdout.write(`${rules} rules, ${examples} examples, ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    return problems.length ? 1 : 0;
  }
  if (action === 'new') {
    const [id, ...extra] = parsed.positionals;
    if (!id || extra.length || !parsed.values.from) throw new UsageError('usage: gpu-doctor knowledge new ID --from FILE [--dir DIR]');
    let made;
    try {
      made = scaffoldRule(dir, id, resolve(parsed.values.from));
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
