// The kept-log redaction's rule set (src/feedback/secret-rules.ts) as data: each rule's id is a name, each
// secret of the corpus leaves a placeholder where it was (a kept log shows that something was taken out and
// what), and the rules that ignore case do (HTTP/2 sends header names in lower case; flags and keys come in
// any case). Written against the mutants Stryker found alive (npm run test:mutation); test/feedback/redact.test.ts
// holds the corpus and the false-positive checks.
import { describe, expect, it } from 'vitest';
import { compileRules, redactLog, redactSecrets } from '../../src/feedback/redact.js';
import { SECRET_RULES, type SecretRule } from '../../src/feedback/secret-rules.js';
import { fake, SECRET_SHAPES } from './secret-shapes.js';

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

  it('a flag’s value that is no secret stays, a quoted one keeps its quotes', () => {
    expect(redactLog('train.py --token none --password "a b c" --api-key ${KEY}')).toBe('train.py --token none --password "<redacted>" --api-key ${KEY}');
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

describe('vendor formats the corpus does not hold', () => {
  // Made up like the corpus (fake(): a fixed pseudo-random walk); each in its vendor's documented shape.
  const hex = (n: number, seed: number) => fake(n, seed, '0123456789abcdef');
  const upper = (n: number, seed: number) => fake(n, seed, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
  const b64 = (n: number, seed: number) => fake(n, seed, 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/');
  const formats: [string, string, string][] = [
    ['gitlab runner registration token', `GR1348941${fake(20, 31)}`, '<gitlab token>'],
    ['hugging face organization token', `api_org_${fake(34, 32)}`, '<hf token>'],
    ['stripe webhook secret', `whsec_${fake(32, 33)}`, '<stripe key>'],
    ['aws bedrock api key', `ABSK${b64(132, 34)}==`, '<aws secret>'],
    ['square access token', `sq0atp-${fake(22, 35)}`, '<square token>'],
    ['doppler token', `dp.pt.${fake(43, 36)}`, '<doppler token>'],
    ['pulumi token', `pul-${hex(40, 37)}`, '<pulumi token>'],
    ['linear api key', `lin_api_${fake(40, 38)}`, '<linear key>'],
    ['sentry token', `sntrys_${b64(60, 39)}`, '<sentry token>'],
    ['1password secret key', `A3-${upper(6, 40)}-${upper(11, 41)}-${upper(5, 42)}-${upper(5, 43)}-${upper(5, 44)}`, '<1password key>'],
    ['1password service account token', `ops_eyJ${b64(260, 45)}`, '<1password token>'],
    ['artifactory api key', `AKCp${fake(69, 46)}`, '<artifactory token>'],
    ['heroku api key', `HRKU-${fake(36, 47)}`, '<heroku key>'],
    ['openshift token', `sha256~${fake(43, 48)}`, '<openshift token>'],
    ['replicate token', `r8_${fake(37, 49)}`, '<api key>'],
    ['groq key', `gsk_${fake(52, 50)}`, '<api key>'],
    ['tailscale auth key', `tskey-auth-${fake(24, 51)}`, '<tailscale key>'],
    ['postman key', `PMAK-${hex(24, 52)}-${hex(34, 53)}`, '<postman key>'],
    ['rubygems token', `rubygems_${hex(48, 54)}`, '<rubygems token>'],
    ['dynatrace token', `dt0c01.${upper(24, 55)}.${upper(64, 56)}`, '<dynatrace token>'],
    ['planetscale token', `pscale_tkn_${fake(43, 57)}`, '<planetscale token>'],
    ['prefect token', `pnu_${fake(36, 58)}`, '<prefect token>'],
    ['brevo (sendinblue) key', `xkeysib-${hex(64, 59)}-${fake(16, 60)}`, '<sendinblue key>'],
    ['alibaba access key id', `LTAI${fake(20, 61)}`, '<alibaba key id>'],
    ['clickhouse cloud key', `4b1d${fake(38, 62)}`, '<clickhouse key>'],
    ['terraform cloud token', `${fake(14, 63)}.atlasv1.${fake(67, 64)}`, '<terraform token>'],
    ['fly.io token', `fo1_${fake(43, 65)}`, '<fly token>'],
  ];
  for (const [what, token, placeholder] of formats)
    it(`${what} becomes ${placeholder}`, () => {
      expect(redactSecrets(`using ${token} now`)).toBe(`using ${placeholder} now`);
    });

  it('a GitLab session cookie loses its value', () => {
    expect(redactSecrets(`Cookie: _gitlab_session=${hex(32, 66)}; path=/`)).toBe('Cookie: _gitlab_session=<redacted>; path=/');
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
