// The kept-log redaction's rule set (src/feedback/secret-rules.ts) as data: each rule's id is a name, each
// secret of the corpus leaves a placeholder where it was (a kept log shows that something was taken out and
// what), and the rules that ignore case do (HTTP/2 sends header names in lower case; flags and keys come in
// any case). Written against the mutants Stryker found alive (npm run test:mutation); test/feedback/redact.test.ts
// holds the corpus and the false-positive checks.
import { describe, expect, it } from 'vitest';
import { compileRules, redactLog, redactSecrets } from '../../src/feedback/redact.js';
import { SECRET_RULES, type SecretRule } from '../../src/feedback/secret-rules.js';
import { SECRET_SHAPES } from './secret-shapes.js';

/** The placeholders in a text: `<slack token>`, `<redacted>`, `<private key>`… */
const placeholders = (text: string) => text.match(/<[a-z0-9 ]{2,40}>/g) ?? [];

describe('secret rules', () => {
  it('every rule id is a lower-case kebab-case name', () => {
    for (const r of SECRET_RULES) expect(r.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  });

  it('every secret of the corpus leaves a placeholder where it was', () => {
    const without = SECRET_SHAPES.filter((s) => placeholders(redactSecrets(s.line)).length <= placeholders(s.line).length).map((s) => s.name);
    expect(without).toEqual([]);
  });

  it('header, flag and key names are matched in any case', () => {
    expect(redactLog('authorization: bearer abcdefgh12345')).toBe('authorization: bearer <token>');
    expect(redactLog('BEARER abcdefgh12345')).toBe('BEARER <token>');
    expect(redactLog('proxy-authorization: basic dXNlcjpwYXNzd29yZA==')).toBe('proxy-authorization: basic <token>');
    expect(redactLog('AUTHORIZATION=Token abcdefgh12345')).toBe('AUTHORIZATION=Token <token>');
    expect(redactLog('train.py --API-KEY k1k2k3k4k5 --epochs 3')).toBe('train.py --API-KEY <redacted> --epochs 3');
    expect(redactLog('Password: hunter2hunter2')).toBe('Password: <redacted>');
  });
});

describe('rules sharing a pass', () => {
  const rule = (id: string, pattern: string, to: string, more: Partial<SecretRule> = {}): SecretRule => ({ id, source: 'test', pattern, to, ...more });
  const run = (rules: SecretRule[], text: string) => compileRules(rules).reduce((out, r) => out.replace(r.re, r.to as string), text);

  it('a rule with flags keeps them: it gets a pass of its own', () => {
    const rules = [rule('a', 'abc', '<a>', { flags: 'i' }), rule('d', 'def', '<d>')];
    expect(compileRules(rules).map((p) => p.id)).toEqual(['a', 'd']);
    expect(run(rules, 'ABC def DEF')).toBe('<a> <d> DEF');
  });

  it('a keyword rule keeps its value check: it gets a pass of its own, and a value that is no secret stays', () => {
    const rules = [rule('k', '(token)(=)(\\S+)', '<k>', { keyword: true }), rule('x', 'x+', '<x>')];
    expect(compileRules(rules).map((p) => p.id)).toEqual(['k', 'x']);
    expect(run(rules, 'token=none token=abc123 xx')).toBe('token=none <k> <x>');
  });

  it('a match that no rule of its pass finds again on its own is still replaced (fails closed)', () => {
    // `foo\B` matches "foo" in "foox" but not "foo" alone (no word character follows it there).
    const rules = [rule('f', 'foo\\B', '<f>'), rule('b', 'bar', '<b>')];
    expect(compileRules(rules)).toHaveLength(1);
    expect(run(rules, 'foox bar foo')).toBe('<redacted>x <b> foo');
  });
});
