// Where a reply's language comes from: the channel's in the config, else the asker's (Discord's
// interaction locale, Slack's user locale, LANG in the console), else the config's default, else English.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { localeFromEnv, localeFromTag, resolveLocale } from '../../src/core/i18n.js';
import { slackUserLocales } from '../../src/adapters/slack/locale.js';

describe('locale resolution', () => {
  it('reads platform tags and POSIX locales', () => {
    expect(localeFromTag('zh-CN')).toBe('zh');
    expect(localeFromTag('zh-TW')).toBe('zh');
    expect(localeFromTag('zh_CN.UTF-8')).toBe('zh');
    expect(localeFromTag('zh')).toBe('zh');
    expect(localeFromTag('en-US')).toBe('en');
    expect(localeFromTag('en_GB.UTF-8')).toBe('en');
    for (const other of ['C', 'C.UTF-8', 'POSIX', 'fr-FR', 'zhx', '', undefined, null]) expect(localeFromTag(other), String(other)).toBeUndefined();
  });

  it('LC_ALL before LC_MESSAGES before LANG', () => {
    expect(localeFromEnv({ LANG: 'zh_CN.UTF-8' })).toBe('zh');
    expect(localeFromEnv({ LC_ALL: 'en_US.UTF-8', LANG: 'zh_CN.UTF-8' })).toBe('en');
    expect(localeFromEnv({ LC_ALL: '', LC_MESSAGES: 'zh_TW.UTF-8', LANG: 'en_US.UTF-8' })).toBe('zh');
    expect(localeFromEnv({ LANG: 'C.UTF-8' })).toBeUndefined();
    expect(localeFromEnv({})).toBeUndefined();
  });

  it('channel, then user, then the config default, then English', () => {
    const settings = { default: 'en' as const, channels: { C123: 'zh' as const } };
    expect(resolveLocale(settings, 'C123', 'en')).toBe('zh');
    expect(resolveLocale(settings, 'C999', 'zh')).toBe('zh');
    expect(resolveLocale(settings, 'C999', undefined)).toBe('en');
    expect(resolveLocale({ default: 'zh', channels: {} }, undefined, undefined)).toBe('zh');
    expect(resolveLocale(undefined, 'C123', undefined)).toBe('en');
  });

  it('the config: locale.default and locale.channels, strict with did-you-mean', () => {
    expect(parseConfig({ locale: { default: 'zh', channels: { C0123ABCD: 'en' } } }).locale).toEqual({ default: 'zh', channels: { C0123ABCD: 'en' } });
    expect(parseConfig({}).locale).toEqual({ default: 'en', channels: {} });
    expect(() => parseConfig({ locale: { chanels: {} } })).toThrow(/unknown key "chanels" \(did you mean "channels"\?\)/);
    expect(() => parseConfig({ locale: { default: 'fr' } })).toThrow(ConfigError);
    expect(() => parseConfig({ locale: { channels: { C1: 'de' } } })).toThrow(/en or zh/);
  });

  it("Slack: a user's locale is asked once and cached; a slow or failing users.info gives undefined in time", async () => {
    const calls: unknown[] = [];
    const client = (answer: (args: unknown) => Promise<unknown>) => ({ users: { info: (args: unknown) => (calls.push(args), answer(args)) } }) as never;
    const lookup = slackUserLocales({ timeoutMs: 50 });
    const zh = client(() => Promise.resolve({ ok: true, user: { locale: 'zh-CN' } }));
    expect(await lookup(zh, 'U1')).toBe('zh');
    expect(await lookup(zh, 'U1')).toBe('zh');
    expect(calls).toEqual([{ user: 'U1', include_locale: true }]);
    expect(
      await lookup(
        client(() => Promise.reject(new Error('missing_scope'))),
        'U2',
      ),
    ).toBeUndefined();
    const t0 = Date.now();
    expect(
      await lookup(
        client(() => new Promise(() => {})),
        'U3',
      ),
    ).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
