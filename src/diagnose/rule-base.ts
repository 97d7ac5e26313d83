// Loads knowledge/<id>/rule.yaml, validates every file with zod and compiles every pattern with re2.
// A broken rule fails start-up loudly, naming the file and the field.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import RE2 from 're2';
import { parse as parseYaml } from 'yaml';
import { ruleSchema, type Rule } from './rule-schema.js';

export type PatternRole = 'patterns' | 'requires' | 'excludes';

export interface CompiledPattern {
  rule: number;
  role: PatternRole;
  source: string;
  /** Global re2 regex, used to find the lines of a pattern the set says is present. */
  regex: RE2;
}

export interface RuleBase {
  rules: Rule[];
  /** Folder each rule came from (same order as rules). */
  dirs: string[];
  patterns: CompiledPattern[];
  /** One linear-time pass over a log tells which patterns occur at all. */
  set: InstanceType<typeof RE2.Set>;
}

export class RuleLoadError extends Error {}

export const DEFAULT_KNOWLEDGE_DIR = resolve(fileURLToPath(new URL('../../knowledge', import.meta.url)));

// Case-insensitive; ^ and $ anchor at line ends because whole logs are searched at once.
const FLAGS = 'im';

function compile(file: string, field: string, source: string): RE2 {
  try {
    return new RE2(source, FLAGS + 'g');
  } catch (e) {
    throw new RuleLoadError(`${file}: ${field}: not a valid re2 pattern: ${(e as Error).message}`);
  }
}

export function loadRule(dir: string): Rule {
  const file = join(dir, 'rule.yaml');
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RuleLoadError(`${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const parsed = ruleSchema.safeParse(doc);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new RuleLoadError(`${file}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

export function loadRuleBase(knowledgeDir = DEFAULT_KNOWLEDGE_DIR): RuleBase {
  if (!existsSync(knowledgeDir)) throw new RuleLoadError(`${knowledgeDir}: knowledge folder not found`);
  const dirs = readdirSync(knowledgeDir)
    .filter((name) => statSync(join(knowledgeDir, name)).isDirectory())
    .sort()
    .map((name) => join(knowledgeDir, name));
  const rules: Rule[] = [];
  const patterns: CompiledPattern[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const rule = loadRule(dir);
    const file = join(dir, 'rule.yaml');
    if (seen.has(rule.id)) throw new RuleLoadError(`${file}: id: "${rule.id}" is also used by ${seen.get(rule.id)}`);
    seen.set(rule.id, file);
    const index = rules.push(rule) - 1;
    for (const role of ['patterns', 'requires', 'excludes'] as const) {
      (rule[role] ?? []).forEach((source, i) => {
        patterns.push({ rule: index, role, source, regex: compile(file, `${role}.${i}`, source) });
      });
    }
  }
  if (rules.length === 0) throw new RuleLoadError(`${knowledgeDir}: no rules found`);
  const set = new RE2.Set(patterns.map((p) => p.source), FLAGS);
  return { rules, dirs, patterns, set };
}
