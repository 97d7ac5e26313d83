// Shared advice (knowledge/advice.yaml): a text that answers failures of more than one rule lives in one place and
// rules name it (`kind: advice`, `shared: <id>`); the loader fills in its text and zh. One text, one place: a change
// to the advice changes every rule that gives it, and no two rules keep drifting copies.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { compileRuleBase, readRules, RuleLoadError } from '../../src/diagnose/rule-base.js';

const KNOWLEDGE = resolve(import.meta.dirname, '../../knowledge');
const TEST_TIMEOUT = 120_000;

interface RawFix {
  kind: string;
  text?: string;
  shared?: string;
}
const ruleFiles = () =>
  readdirSync(KNOWLEDGE, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(KNOWLEDGE, e.name, 'rule.yaml'));
const rawFixes = () => ruleFiles().flatMap((file) => ((parse(readFileSync(file, 'utf8')) as { fixes?: RawFix[] }).fixes ?? []).map((fix) => ({ file, fix })));

describe('the knowledge base keeps each advice text in one place', () => {
  it('no inline advice text is given word for word by two fixes (such a text belongs in advice.yaml)', () => {
    const byText = new Map<string, string[]>();
    for (const { file, fix } of rawFixes()) if (fix.text) byText.set(fix.text, [...(byText.get(fix.text) ?? []), file]);
    const repeated = [...byText].filter(([, files]) => files.length > 1).map(([text, files]) => `${files.join(', ')}: ${text.slice(0, 60)}`);
    expect(repeated).toEqual([]);
  });

  it('every shared advice is named by fixes of at least two rules (one rule’s advice stays inline), and every name is an id', () => {
    const advice = parse(readFileSync(join(KNOWLEDGE, 'advice.yaml'), 'utf8')) as { id: string }[];
    const users = new Map<string, Set<string>>(advice.map((a) => [a.id, new Set<string>()]));
    for (const { file, fix } of rawFixes()) {
      if (fix.shared === undefined) continue;
      expect(users.has(fix.shared), `${file}: shared: ${fix.shared}`).toBe(true);
      users.get(fix.shared)!.add(file);
    }
    expect([...users].filter(([, files]) => files.size < 2).map(([id]) => id)).toEqual([]);
  });

  it(
    'the loaded rules carry the shared text and its Chinese, as an inline fix would',
    async () => {
      const { rules } = await readRules(KNOWLEDGE);
      const advice = parse(readFileSync(join(KNOWLEDGE, 'advice.yaml'), 'utf8')) as { id: string; text: string; zh: { text: string } }[];
      const named = rules.flatMap((r) => r.fixes.filter((f) => f.shared !== undefined));
      expect(named.length).toBeGreaterThanOrEqual(2 * advice.length);
      for (const f of named) {
        const a = advice.find((x) => x.id === f.shared)!;
        expect(f).toMatchObject({ kind: 'advice', text: a.text, zh: { text: a.zh.text } });
      }
    },
    TEST_TIMEOUT,
  );
});

describe('advice.yaml as the loader reads it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-shared-advice-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const rule = (id: string, fixes: string) => {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(
      join(dir, id, 'rule.yaml'),
      `id: ${id}\ntitle: ${id} as a title\ncategory: cuda_oom\npriority: 10\npatterns: ['${id} happened']\nsource: {note: test}\nfixes: ${fixes}\n`,
    );
  };
  const advice = (text: string, zh = '共享的建议') =>
    writeFileSync(join(dir, 'advice.yaml'), `- id: one-advice\n  text: '${text}'\n  zh:\n    text: '${zh}'\n`);
  const load = async (cacheFile?: string) => {
    const { files, rules } = await readRules(dir, cacheFile);
    return compileRuleBase(files, rules);
  };

  it(
    'fills the text of every rule that names it, beside inline advice, and refuses an unknown id naming the rule and fix',
    async () => {
      advice('shared words');
      rule('first-rule', "[{kind: advice, shared: one-advice}, {kind: advice, text: 'its own words'}]");
      rule('second-rule', '[{kind: advice, shared: one-advice, when: [not_absurd_request]}]');
      const base = await load();
      expect(base.rules.map((r) => r.fixes.map((f) => f.text))).toEqual([['shared words', 'its own words'], ['shared words']]);
      expect(base.rules[1].fixes[0]).toMatchObject({ zh: { text: '共享的建议' }, when: ['not_absurd_request'] });
      rule('second-rule', '[{kind: advice, shared: no-such-advice}]');
      await expect(load()).rejects.toThrow(RuleLoadError);
      await expect(load()).rejects.toThrow(/second-rule\/rule\.yaml: fixes\.0\.shared: "no-such-advice" is no id in advice\.yaml/);
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses a fix with both text and shared, shared zh in a rule, placeholders the translation lacks, and an id used twice',
    async () => {
      advice('shared words');
      rule('second-rule', "[{kind: advice, shared: one-advice, text: 'and words'}]");
      await expect(load()).rejects.toThrow(/text or shared/);
      rule('second-rule', "[{kind: advice, shared: one-advice, zh: {text: '另外'}}]");
      await expect(load()).rejects.toThrow(/shared advice brings its own zh/);
      rule('second-rule', '[{kind: advice, shared: one-advice}]');
      advice('free {freeMiB} of it', '没有占位符');
      await expect(load()).rejects.toThrow(/advice\.yaml: 0\.zh\.text: zh\.text must translate text/);
      writeFileSync(join(dir, 'advice.yaml'), `- {id: one-advice, text: a, zh: {text: 甲}}\n- {id: one-advice, text: b, zh: {text: 乙}}\n`);
      await expect(load()).rejects.toThrow(/id "one-advice" is used twice/);
    },
    TEST_TIMEOUT,
  );

  it(
    'a build cache written before advice.yaml changed is not used: the new text is read',
    async () => {
      advice('the old words');
      rule('second-rule', '[{kind: advice, shared: one-advice}]');
      const { files, rules, advice: stamp } = await readRules(dir);
      const cacheFile = join(dir, 'knowledge.json');
      const entry = (f: { file: string; size: number; mtimeMs: number }) => ({ file: f.file, size: f.size, mtimeMs: f.mtimeMs });
      writeFileSync(cacheFile, JSON.stringify({ files: files.map(entry), advice: stamp, rules }));
      expect((await load(cacheFile)).rules[1].fixes[0].text).toBe('the old words');
      advice('the new words, longer');
      const later = new Date(Date.now() + 5000);
      utimesSync(join(dir, 'advice.yaml'), later, later);
      expect((await load(cacheFile)).rules[1].fixes[0].text).toBe('the new words, longer');
    },
    TEST_TIMEOUT,
  );
});
