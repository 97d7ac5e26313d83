// Validates every rule (full zod + re2 check) and returns what dist/knowledge.json holds.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { compileRuleBase, DEFAULT_KNOWLEDGE_DIR, readRules, readTools } from '../src/diagnose/rule-base.js';
import { compileTools } from '../src/diagnose/tools.js';

export async function writeRuleCache() {
  const { files, rules, advice } = await readRules();
  compileRuleBase(files, rules);
  const tools = await readTools();
  const toolsFile = join(DEFAULT_KNOWLEDGE_DIR, 'tools.yaml');
  const toolsEntry = tools ? { size: statSync(toolsFile).size, mtimeMs: statSync(toolsFile).mtimeMs, tools: compileTools(tools, toolsFile).tools } : undefined;
  return {
    files: files.map(({ file, size, mtimeMs }) => ({ file, size, mtimeMs })),
    ...(advice ? { advice } : {}),
    rules,
    ...(toolsEntry ? { tools: toolsEntry } : {}),
  };
}
