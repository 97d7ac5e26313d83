// `gpu-doctor knowledge check` and `knowledge new` (issue 14 §5): a lab grows its own rule base without
// reading the engine. check = the rule lint plus every example (match/*.log must be the rule's first
// diagnosis, no-match/*.log must not); new = a rule folder scaffolded around one real log.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { diagnose } from './diagnose.js';
import { finalError } from './final-error.js';
import { LogText, normalizeLog } from './normalize.js';
import { loadRuleBase, RuleLoadError } from './rule-base.js';
import { FileRefused, readRegularFileCapped } from '../core/regular-file.js';

export interface CheckProblem {
  rule: string;
  problem: string;
}

const logs = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.log'))
        .sort()
    : [];

/** Every problem of the rule base in `dir`; an empty list means every rule is complete and every example holds. */
export async function checkKnowledge(dir: string): Promise<{ rules: number; examples: number; problems: CheckProblem[] }> {
  let base;
  try {
    base = await loadRuleBase(dir);
  } catch (e) {
    if (e instanceof RuleLoadError) return { rules: 0, examples: 0, problems: [{ rule: '(load)', problem: e.message }] };
    throw e;
  }
  const problems: CheckProblem[] = [];
  let examples = 0;
  base.rules.forEach((rule, i) => {
    const ruleDir = base.dirs[i];
    const add = (problem: string) => problems.push({ rule: rule.id, problem });
    if (basename(ruleDir) !== rule.id) add(`folder ${basename(ruleDir)} does not match id ${rule.id}`);
    const match = logs(join(ruleDir, 'match'));
    const noMatch = logs(join(ruleDir, 'no-match'));
    if (!match.length) add('no match/*.log example (a real log the rule must win on)');
    if (!noMatch.length) add('no no-match/*.log example (a near miss the rule must not win on)');
    // Replies are in English and Simplified Chinese (issue 14 §6): a rule without its zh texts still
    // loads (a zh reply shows the English), but is not complete.
    if (!rule.zh) add('no zh: title (the title in Simplified Chinese)');
    rule.fixes.forEach((fix, j) => {
      if (fix.text !== undefined && !fix.zh) add(`fixes[${j}] (${fix.kind}): no zh: text (the text in Simplified Chinese)`);
    });
    // A scaffold (`knowledge new`) loads and may even win its example, but its texts are placeholders that
    // would reach a chat: a rule still saying TODO is not complete.
    const todo = (where: string, text: string | undefined) => {
      if (text?.includes('TODO')) add(`${where} still says TODO: "${text.slice(0, 60)}"`);
    };
    todo('title', rule.title);
    todo('zh: title', rule.zh?.title);
    rule.fixes.forEach((fix, j) => {
      todo(`fixes[${j}] (${fix.kind}) text`, fix.text);
      todo(`fixes[${j}] (${fix.kind}) zh: text`, fix.zh?.text);
    });
    // An example that is no regular file (a FIFO) or over the cap is a problem of its own, never a wait.
    const example = (folder: string, f: string): string | null => {
      try {
        const r = readRegularFileCapped(join(ruleDir, folder, f), MAX_LOG_BYTES);
        if (!r.over) return r.data.toString('utf8');
        add(`${folder}/${f}: over 1 MB`);
      } catch (e) {
        if (!(e instanceof FileRefused)) throw e;
        add(`${folder}/${f}: ${e.message}`);
      }
      return null;
    };
    for (const f of match) {
      examples++;
      const text = example('match', f);
      const got = text === null ? undefined : diagnose(text, base).diagnoses[0]?.rule;
      if (text !== null && got !== rule.id) add(`match/${f}: the first diagnosis is ${got ?? 'none'}, not ${rule.id}`);
    }
    for (const f of noMatch) {
      examples++;
      const text = example('no-match', f);
      if (text !== null && diagnose(text, base).diagnoses[0]?.rule === rule.id) add(`no-match/${f}: ${rule.id} wins on it`);
    }
  });
  return { rules: base.rules.length, examples, problems };
}

export const RULE_ID = /^[a-z0-9]+(?:-[a-z0-9]+){0,8}$/;
const MAX_LOG_BYTES = 1 << 20;

/** A re2 pattern for the log's last error line: literal text, numbers generalised, bounded. */
export function suggestPattern(text: string): string | undefined {
  const log = new LogText(normalizeLog(text));
  const last = finalError(log);
  let line = last ? log.line(last.line) : undefined;
  if (!line) {
    for (let i = log.lineCount - 1; i >= 0 && !line; i--) if (/error|killed|out of memory|failed/i.test(log.line(i))) line = log.line(i);
  }
  if (!line) return undefined;
  // From the exception's name when the line has one ("_But i met : RuntimeError: ..." -> "RuntimeError: ...").
  const at = line.search(/\b[A-Za-z_.]{0,60}(?:Error|Exception)\b:?/);
  const core = line.slice(Math.max(0, at)).trim().slice(0, 120);
  if (core.length < 3) return undefined;
  const escaped = core
    .replace(/[\\^$.*+?()[\]{}|/]/g, (c) => `\\${c}`)
    .replace(/\d+(?:\\\.\d+)?/g, (m) => (m.includes('.') ? '\\d{1,12}(?:\\.\\d{1,6})?' : '\\d{1,12}'));
  return escaped;
}

/** knowledge/ID/{rule.yaml, match/<log>, no-match/}: a rule to complete around one real log. */
export function scaffoldRule(dir: string, id: string, logFile: string): { ruleDir: string; pattern: string | undefined } {
  if (!RULE_ID.test(id)) throw new Error(`rule id "${id.slice(0, 60)}": lower-case words joined by - (e.g. my-loader-oom)`);
  const ruleDir = join(dir, id);
  if (existsSync(ruleDir)) throw new Error(`${id} already exists in ${dir}`);
  // Read no further than the cap, and only from a regular file (/dev/zero, a FIFO are refused at once).
  const raw = readRegularFileCapped(logFile, MAX_LOG_BYTES);
  if (raw.over) throw new Error(`${basename(logFile)} is over 1 MB: cut it to the lines that show the failure`);
  const text = raw.data.toString('utf8');
  const pattern = suggestPattern(text);
  mkdirSync(join(ruleDir, 'match'), { recursive: true });
  mkdirSync(join(ruleDir, 'no-match'), { recursive: true });
  const example = basename(logFile)
    .replace(/[^\w.-]/g, '_')
    .replace(/(?:\.log)?$/, '.log');
  writeFileSync(join(ruleDir, 'match', example), text);
  const yamlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
  writeFileSync(
    join(ruleDir, 'rule.yaml'),
    [
      `id: ${id}`,
      `title: ${yamlString(`TODO: what went wrong, in one line (${id})`)}`,
      'zh:',
      `  title: ${yamlString(`TODO: 同一句话的中文 (${id})`)}`,
      '# one of: cuda_oom, replica_oom, fragmentation, host_oom_killed, shm_exhausted, growing_memory_leak,',
      '# cudnn_cublas_alloc, nccl_or_distributed, driver_or_smi, device_assert_not_memory, unrelated',
      'category: cuda_oom',
      '# higher wins when several rules match (cuda-oom is 100)',
      'priority: 100',
      'patterns:',
      `  # suggested from the log's last error line; keep what identifies the failure`,
      `  - ${yamlString(pattern ?? 'TODO a line of the log')}`,
      'fixes:',
      '  - kind: advice',
      `    text: ${yamlString("TODO: the fix an experienced engineer would give, with the tool's own flag names")}`,
      '    zh:',
      `      text: ${yamlString('TODO: 同一条修复建议的中文（参数名照原样保留）')}`,
      'source:',
      `  note: ${yamlString(`scaffolded from ${basename(logFile)}; name the public issue it came from`)}`,
      '',
    ].join('\n'),
  );
  return { ruleDir, pattern };
}
