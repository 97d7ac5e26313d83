// Validates every rule (full zod + re2 check) and returns what dist/knowledge.json holds.
import { compileRuleBase, readRules } from '../src/diagnose/rule-base.js';

export async function writeRuleCache() {
  const { files, rules } = await readRules();
  compileRuleBase(files, rules);
  return { files: files.map(({ file, size, mtimeMs }) => ({ file, size, mtimeMs })), rules };
}
