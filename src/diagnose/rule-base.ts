// Loads knowledge/<id>/rule.yaml, validates every file with zod and compiles every pattern with re2.
// A broken rule fails start-up loudly, naming the file and the field.
//
// `npm run build` also writes the validated rules to dist/knowledge.json with each file's size and
// mtime; when every file still matches, start-up uses that and skips YAML and zod (~300 ms per CLI run).
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import RE2 from 're2';
import type { Rule } from './rule-types.js';
import { PROJECT_ROOT } from '../core/paths.js';
import { compileTools, type CompiledTools, type ToolInfo } from './tools.js';

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
  /** knowledge/tools.yaml, compiled (absent in a knowledge folder without one). */
  tools?: CompiledTools;
  /** Folder each rule came from (same order as rules). */
  dirs: string[];
  patterns: CompiledPattern[];
  /**
   * Linear-time passes over a log tell which patterns occur at all: one RE2.Set while the patterns fit re2's
   * memory budget for one program, more (each with the index of its first pattern) once they do not.
   */
  sets: PatternSet[];
}

export interface PatternSet {
  set: InstanceType<typeof RE2.Set>;
  /** Index in `patterns` of this set's first pattern. */
  offset: number;
}

/**
 * re2 compiles a set into one program under a fixed memory budget (node-re2 exposes no max_mem), so a rule base
 * past it fails as a whole although every pattern compiles alone. Split in halves until each part compiles: the
 * usual base stays one set (one pass); a larger one costs one more pass per split, never a refused rule.
 */
export function compilePatternSets(sources: string[], flags: string, offset = 0): PatternSet[] {
  try {
    return [{ set: new RE2.Set(sources, flags), offset }];
  } catch (e) {
    if (sources.length < 2) throw e;
    const half = Math.ceil(sources.length / 2);
    return [...compilePatternSets(sources.slice(0, half), flags, offset), ...compilePatternSets(sources.slice(half), flags, offset + half)];
  }
}

// The rules join the commands' Services from here (registration): the core names no wing.
declare module '../core/services.js' {
  interface Services {
    rules: RuleBase;
  }
}

export class RuleLoadError extends Error {}

export const DEFAULT_KNOWLEDGE_DIR = resolve(PROJECT_ROOT, 'knowledge');
export const RULE_CACHE_FILE = resolve(PROJECT_ROOT, 'dist', 'knowledge.json');

// Case-insensitive; ^ and $ anchor at line ends because whole logs are searched at once.
const FLAGS = 'im';

interface RuleFile {
  dir: string;
  file: string;
  size: number;
  mtimeMs: number;
}

function listRuleFiles(knowledgeDir: string): RuleFile[] {
  if (!existsSync(knowledgeDir)) throw new RuleLoadError(`${knowledgeDir}: knowledge folder not found`);
  return readdirSync(knowledgeDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(knowledgeDir, e.name))
    .sort()
    .map((dir) => {
      const file = join(dir, 'rule.yaml');
      if (!existsSync(file)) throw new RuleLoadError(`${file}: missing (every knowledge folder holds a rule.yaml)`);
      const st = statSync(file);
      return { dir, file, size: st.size, mtimeMs: st.mtimeMs };
    });
}

async function parseRuleFile(file: string): Promise<Rule> {
  const [{ parse: parseYaml }, { ruleSchema }] = await Promise.all([import('yaml'), import('./rule-schema.js')]);
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

interface RuleCache {
  files: { file: string; size: number; mtimeMs: number }[];
  /** knowledge/advice.yaml as it was when the cached rules' shared advice was filled in (absent: no such file). */
  advice?: { size: number; mtimeMs: number };
  rules: Rule[];
}

type FileStamp = { size: number; mtimeMs: number };
const stampOf = (file: string): FileStamp | undefined => {
  if (!existsSync(file)) return undefined;
  const st = statSync(file);
  return { size: st.size, mtimeMs: st.mtimeMs };
};

function cachedRules(files: RuleFile[], advice: FileStamp | undefined, cacheFile: string): Rule[] | null {
  if (!existsSync(cacheFile)) return null;
  try {
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as RuleCache;
    const same =
      cache.files.length === files.length &&
      cache.files.every((c, i) => c.file === files[i].file && c.size === files[i].size && c.mtimeMs === files[i].mtimeMs) &&
      cache.advice?.size === advice?.size &&
      cache.advice?.mtimeMs === advice?.mtimeMs;
    return same ? cache.rules : null;
  } catch {
    return null;
  }
}

/** knowledge/advice.yaml validated: shared advice by id (empty when the folder has none). */
async function readSharedAdvice(file: string): Promise<Map<string, { text: string; zh: { text: string } }>> {
  if (!existsSync(file)) return new Map();
  const [{ parse: parseYaml }, { sharedAdviceSchema }] = await Promise.all([import('yaml'), import('./rule-schema.js')]);
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RuleLoadError(`${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const parsed = sharedAdviceSchema.safeParse(doc);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new RuleLoadError(`${file}: ${problems.join('; ')}`);
  }
  const byId = new Map<string, { text: string; zh: { text: string } }>();
  for (const a of parsed.data) {
    if (byId.has(a.id)) throw new RuleLoadError(`${file}: id "${a.id}" is used twice`);
    byId.set(a.id, { text: a.text, zh: a.zh });
  }
  return byId;
}

/** A rule's `shared:` fixes with their text filled from advice.yaml; an unknown id fails loudly, naming the fix. */
function fillSharedAdvice(rule: Rule, file: string, advice: Map<string, { text: string; zh: { text: string } }>): Rule {
  if (!rule.fixes.some((f) => f.shared !== undefined)) return rule;
  const fixes = rule.fixes.map((f, i) => {
    if (f.shared === undefined) return f;
    const a = advice.get(f.shared);
    if (!a) throw new RuleLoadError(`${file}: fixes.${i}.shared: "${f.shared}" is no id in advice.yaml`);
    return { ...f, text: a.text, zh: a.zh };
  });
  return { ...rule, fixes };
}

export const SHARED_ADVICE_FILE = 'advice.yaml';

/** Validated rules of a knowledge folder, plus what the build's cache needs to know they are current. */
export async function readRules(knowledgeDir = DEFAULT_KNOWLEDGE_DIR, cacheFile?: string): Promise<{ files: RuleFile[]; rules: Rule[]; advice?: FileStamp }> {
  const files = listRuleFiles(knowledgeDir);
  const adviceFile = join(knowledgeDir, SHARED_ADVICE_FILE);
  const advice = stampOf(adviceFile);
  const cached = cacheFile ? cachedRules(files, advice, cacheFile) : null;
  if (cached) return { files, rules: cached, advice };
  const shared = await readSharedAdvice(adviceFile);
  const rules: Rule[] = [];
  for (const f of files) rules.push(fillSharedAdvice(await parseRuleFile(f.file), f.file, shared));
  return { files, rules, advice };
}

/**
 * A recognition rule (answers: id) is answered by that rule: its conditions, captures and fixes, the
 * recognition rule's own fixes after them. Recognising a failure's form and answering the failure stay apart, so a new form copies no answer.
 */
function resolveAnswers(files: { file: string }[], rules: Rule[]): Rule[] {
  const byId = new Map(rules.map((r, i) => [r.id, i]));
  return rules.map((rule, i) => {
    if (rule.answers === undefined) {
      if (rule.fixes.length === 0) throw new RuleLoadError(`${files[i].file}: fixes: a rule needs fixes unless it answers another rule`);
      return rule;
    }
    const at = byId.get(rule.answers);
    const target = at === undefined ? undefined : rules[at];
    if (!target) throw new RuleLoadError(`${files[i].file}: answers: "${rule.answers}" is no rule's id`);
    if (target.answers !== undefined) throw new RuleLoadError(`${files[i].file}: answers: "${rule.answers}" is itself a recognition rule`);
    if (target.category !== rule.category) throw new RuleLoadError(`${files[i].file}: category must be ${target.category}, the category of ${target.id}`);
    return {
      ...rule,
      when: [...(target.when ?? []), ...(rule.when ?? [])],
      captures: [...new Set([...target.captures, ...rule.captures])],
      fixes: [...target.fixes, ...rule.fixes],
    };
  });
}

export function compileRuleBase(files: { dir: string; file: string }[], parsed: Rule[]): RuleBase {
  const rules = resolveAnswers(files, parsed);
  const patterns: CompiledPattern[] = [];
  const seen = new Map<string, string>();
  rules.forEach((rule, index) => {
    const file = files[index].file;
    if (seen.has(rule.id)) throw new RuleLoadError(`${file}: id: "${rule.id}" is also used by ${seen.get(rule.id)}`);
    seen.set(rule.id, file);
    for (const role of ['patterns', 'requires', 'excludes'] as const) {
      (rule[role] ?? []).forEach((source, i) => {
        let regex: RE2;
        try {
          regex = new RE2(source, FLAGS + 'g');
        } catch (e) {
          throw new RuleLoadError(`${file}: ${role}.${i}: not a valid re2 pattern: ${(e as Error).message}`);
        }
        patterns.push({ rule: index, role, source, regex });
      });
    }
  });
  if (rules.length === 0) throw new RuleLoadError(`no rules found`);
  const sets = compilePatternSets(
    patterns.map((p) => p.source),
    FLAGS,
  );
  return { rules, dirs: files.map((f) => f.dir), patterns, sets };
}

export async function loadRuleBase(knowledgeDir = DEFAULT_KNOWLEDGE_DIR): Promise<RuleBase> {
  const cache = knowledgeDir === DEFAULT_KNOWLEDGE_DIR ? RULE_CACHE_FILE : undefined;
  const { files, rules } = await readRules(knowledgeDir, cache);
  const base = compileRuleBase(files, rules);
  const tools = await readTools(knowledgeDir, cache);
  if (tools) {
    try {
      base.tools = compileTools(tools, join(knowledgeDir, 'tools.yaml'));
    } catch (e) {
      throw new RuleLoadError((e as Error).message);
    }
  }
  return base;
}

interface ToolsCache {
  tools?: { size: number; mtimeMs: number; tools: ToolInfo[] };
}

/** knowledge/tools.yaml validated (from the build's cache when the file is unchanged); null when absent. */
export async function readTools(knowledgeDir = DEFAULT_KNOWLEDGE_DIR, cacheFile?: string): Promise<ToolInfo[] | null> {
  const file = join(knowledgeDir, 'tools.yaml');
  if (!existsSync(file)) return null;
  const st = statSync(file);
  if (cacheFile && existsSync(cacheFile)) {
    try {
      const cached = (JSON.parse(readFileSync(cacheFile, 'utf8')) as ToolsCache).tools;
      if (cached && cached.size === st.size && cached.mtimeMs === st.mtimeMs) return cached.tools;
    } catch {
      // a broken cache is rebuilt from the file below
    }
  }
  const [{ parse: parseYaml }, { toolsSchema }] = await Promise.all([import('yaml'), import('./rule-schema.js')]);
  let data: unknown;
  try {
    data = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RuleLoadError(`${file}: not valid YAML: ${(e as Error).message}`);
  }
  const parsed = toolsSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RuleLoadError(`${file}: ${issue.path.join('.')}: ${issue.message}`);
  }
  const ids = new Set<string>();
  for (const t of parsed.data) {
    if (ids.has(t.id)) throw new RuleLoadError(`${file}: tool id "${t.id}" is used twice`);
    ids.add(t.id);
  }
  return parsed.data;
}
