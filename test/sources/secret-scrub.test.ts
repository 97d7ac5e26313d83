// The credential scrubber (src/core/secret-scrub.ts) on its own: the forms it looks for (as they are,
// URL-encoded, JSON-escaped, base64 and inside longer base64 at each alignment), what registers a
// credential, and that it leaves everything else alone. prometheus-hostile.test.ts has it end to end.
import { afterEach, describe, expect, it } from 'vitest';
import {
  forgetSecrets,
  knownSecrets,
  MIN_SECRET_LENGTH,
  registerBasicAuth,
  registerSecret,
  registerUrlPassword,
  scrub,
  scrubDeep,
  SECRET_ENV,
  SECRET_MARKER,
  secretForms,
} from '../../src/core/secret-scrub.js';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const TOKEN = 'tok-3f9a+b/c=d"e\\f';

afterEach(() => forgetSecrets());

describe('the forms of a credential', () => {
  it('as it is, URL-encoded, JSON-escaped, base64 padded, unpadded and base64url, longest first', () => {
    const forms = secretForms(TOKEN);
    for (const f of [
      TOKEN,
      encodeURIComponent(TOKEN),
      JSON.stringify(TOKEN).slice(1, -1),
      b64(TOKEN),
      b64(TOKEN).replace(/=+$/, ''),
      Buffer.from(TOKEN).toString('base64url'),
    ])
      expect(forms).toContain(f);
    expect(forms.map((f) => f.length)).toEqual([...forms.map((f) => f.length)].sort((a, b) => b - a));
    expect(secretForms(TOKEN)).toBe(forms);
  });

  it('inside a longer base64 text at each of the three byte alignments, and inside the base64 of its base64', () => {
    const secret = 'user:pa55word';
    for (const before of ['', 'B', 'Ba', 'Bas', 'Basic ', 'Bearer ']) {
      for (const after of ['', 'x', 'xy', ' tail']) {
        const once = b64(`${before}${secret}${after}`);
        expect(scrub(once, [secret]), `${before}|${after}`).toContain(SECRET_MARKER);
        // The whole header (`Basic <base64>`) encoded again by a proxy.
        const twice = b64(`${before}${b64(secret)}${after}`);
        expect(scrub(twice, [secret]), `twice ${before}|${after}`).toContain(SECRET_MARKER);
      }
    }
    // What is left of an encoded header around the marker gives nothing of the secret back.
    const left = scrub(b64(`Basic ${secret}`), [secret])
      .split(SECRET_MARKER)
      .join('');
    expect(left.length).toBeLessThanOrEqual(12);
  });

  it('base64 without its padding; a base64 core shorter than 8 characters is no form (it would match by chance)', () => {
    expect(b64('abcdefg')).toMatch(/==$/);
    expect(secretForms('abcdefg')).toContain(b64('abcdefg').slice(0, -2));
    const short = b64(Buffer.concat([Buffer.alloc(2), Buffer.from('abcdef')])).slice(3, 8);
    expect(short).toHaveLength(5);
    expect(secretForms('abcdef')).not.toContain(short);
    expect(secretForms('abcdef').every((f) => f.length >= 6)).toBe(true);
  });

  it('computes the forms of a secret once, and forgets them past 256 secrets', () => {
    const first = secretForms('first-secret');
    expect(secretForms('first-secret')).toBe(first);
    for (let i = 0; i < 300; i++) secretForms(`other-secret-${i}`);
    expect(secretForms('first-secret')).not.toBe(first);
    expect(secretForms('first-secret')).toEqual(first);
  });

  it(`a value shorter than ${MIN_SECRET_LENGTH} characters has no forms of its own (it would blank ordinary words)`, () => {
    expect(secretForms('abcde')).toEqual([]);
    expect(secretForms('abcdef')).toContain('abcdef');
    expect(scrub('the pw abcde', ['abcde'])).toBe('the pw abcde');
    expect(scrub('x abcdef y', ['abcdef'])).toBe(`x ${SECRET_MARKER} y`);
  });
});

describe('what is known', () => {
  it('registered values, and the chat tokens and PGPASSWORD of the environment at each scrub', () => {
    registerSecret('registered-secret');
    registerSecret('');
    registerSecret(undefined);
    registerSecret(null);
    expect(knownSecrets({})).toEqual(['registered-secret']);
    expect(SECRET_ENV).toEqual(['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'DISCORD_TOKEN', 'PGPASSWORD']);
    const env = Object.fromEntries(SECRET_ENV.map((k) => [k, `value-of-${k}`]));
    expect(knownSecrets({ ...env, SLACK_APP_TOKEN: '', OTHER: 'not-a-secret' }).sort()).toEqual(
      ['registered-secret', ...SECRET_ENV.filter((k) => k !== 'SLACK_APP_TOKEN').map((k) => `value-of-${k}`)].sort(),
    );
    forgetSecrets();
    expect(knownSecrets({})).toEqual([]);
  });

  it('basic auth: the password and user:password (so the header base64 too)', () => {
    registerBasicAuth('gpu-bot', 'hunter22');
    expect(knownSecrets({}).sort()).toEqual(['gpu-bot:hunter22', 'hunter22']);
    expect(scrub(`Authorization: Basic ${b64('gpu-bot:hunter22')}`)).toBe(`Authorization: Basic ${SECRET_MARKER}`);
  });

  it("a Postgres URL's password, as written and decoded; a URL without one adds nothing", () => {
    registerUrlPassword('postgres://app:p%40ss%2Fw0rd@db:5432/gpu');
    expect(knownSecrets({}).sort()).toEqual(['p%40ss%2Fw0rd', 'p@ss/w0rd']);
    forgetSecrets();
    registerUrlPassword('postgres://app@db/gpu');
    registerUrlPassword('postgres://db/gpu');
    registerUrlPassword('postgres://app:@db/gpu');
    registerUrlPassword(undefined);
    registerUrlPassword('');
    expect(knownSecrets({})).toEqual([]);
    registerUrlPassword('postgresql://app:bad%zzpass@db/gpu');
    expect(knownSecrets({})).toEqual(['bad%zzpass']);
    forgetSecrets();
    registerUrlPassword('not a url :pw@host');
    registerUrlPassword('see postgres://u:secretpw@h/db');
    expect(knownSecrets({})).toEqual([]);
  });
});

describe('scrubbing', () => {
  it('replaces every occurrence, the longest form first, and leaves other text alone', () => {
    expect(SECRET_MARKER).toBe('[redacted]');
    expect(scrub('Stryker was here')).toBe('Stryker was here');
    expect(scrubDeep({ a: 'Stryker was here' })).toEqual({ a: 'Stryker was here' });
    registerSecret('outer-secret-inner');
    registerSecret('inner-only');
    expect(scrub('a outer-secret-inner b outer-secret-inner c inner-only')).toBe(`a ${SECRET_MARKER} b ${SECRET_MARKER} c ${SECRET_MARKER}`);
    expect(scrub('nothing to see')).toBe('nothing to see');
    expect(scrub('')).toBe('');
  });

  it('Slack-shaped tokens go whatever their value', () => {
    for (const t of ['xoxb-1234-5678-abcdEFGH', 'xoxp-12345678', 'xoxe-1-abcdefgh', 'xapp-1-A0-123-abcdef'])
      expect(scrub(`token ${t} end`), t).toBe(`token ${SECRET_MARKER} end`);
    expect(scrub('xoxb-short')).toBe('xoxb-short');
    expect(scrub('axoxb-12345678')).toBe('axoxb-12345678');
  });

  it('a reply: every string at any depth, buffers, numbers and nulls as they are', () => {
    registerSecret('deep-secret-1');
    const data = Buffer.from('deep-secret-1');
    const reply = {
      title: 'x deep-secret-1',
      n: 3,
      none: null,
      sections: [{ text: 'deep-secret-1', table: { columns: ['c'], rows: [['deep-secret-1 y']] }, fields: [{ label: 'l', value: 'deep-secret-1' }] }],
      files: [{ filename: 'f', data }],
    };
    const out = scrubDeep(reply);
    expect(out).toEqual({
      title: `x ${SECRET_MARKER}`,
      n: 3,
      none: null,
      sections: [{ text: SECRET_MARKER, table: { columns: ['c'], rows: [[`${SECRET_MARKER} y`]] }, fields: [{ label: 'l', value: SECRET_MARKER }] }],
      files: [{ filename: 'f', data }],
    });
    expect(out.files[0].data).toBe(data);
    expect(reply.title).toBe('x deep-secret-1');
    expect(scrubDeep('deep-secret-1')).toBe(SECRET_MARKER);
  });

  it('is linear: a megabyte of near-misses costs one pass per form', () => {
    registerSecret('aaaaaaaaab');
    const text = 'aaaaaaaaa'.repeat(120_000);
    expect(scrub(text)).toBe(text);
  });
});
