// The chat adapters' registry (src/adapters/index.ts) and the platforms named in src/core/platform.ts
// agree: every ChatPlatform has its adapter and every adapter its platform, and what a platform needs
// outside its folder (its config keys, its environment, its start, its admin check) comes from them.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { CHAT_ADAPTERS, chatModeOf, howToSetAChatToken, parseEnv, registeredAdapters, registryProblems } from '../../src/adapters/index.js';
import { CHAT_PLATFORMS, SERVER_PLATFORMS } from '../../src/core/platform.js';
import { SECRET_ENV } from '../../src/core/secret-scrub.js';

describe('adapters registry', () => {
  it('every ChatPlatform has a registered adapter and every adapter a platform', () => {
    expect(registryProblems(CHAT_PLATFORMS, CHAT_ADAPTERS, SECRET_ENV)).toEqual([]);
    expect(Object.keys(CHAT_ADAPTERS).sort()).toEqual([...SERVER_PLATFORMS].sort());
  });

  it('a platform listed in ChatPlatform with no adapter fails, and an adapter with no platform', () => {
    expect(registryProblems([...CHAT_PLATFORMS, 'matrix'], CHAT_ADAPTERS, SECRET_ENV)).toEqual([
      'matrix is a ChatPlatform with no adapter in src/adapters/index.ts',
    ]);
    const { discord, ...onlySlack } = CHAT_ADAPTERS;
    expect(registryProblems(CHAT_PLATFORMS, onlySlack, SECRET_ENV)).toEqual(['discord is a ChatPlatform with no adapter in src/adapters/index.ts']);
    const teams = { ...discord, name: 'teams' as never, env: { shape: {}, secrets: [] } };
    expect(registryProblems(CHAT_PLATFORMS, { ...CHAT_ADAPTERS, teams }, SECRET_ENV)).toEqual([
      'teams has an adapter but is not in CHAT_PLATFORMS (src/core/platform.ts)',
    ]);
  });

  it('a descriptor under another name, or a token the scrubber does not know, fails', () => {
    expect(registryProblems(CHAT_PLATFORMS, { ...CHAT_ADAPTERS, discord: CHAT_ADAPTERS.slack }, SECRET_ENV)).toEqual([
      'the adapter listed as discord says it is slack',
    ]);
    expect(
      registryProblems(
        CHAT_PLATFORMS,
        CHAT_ADAPTERS,
        SECRET_ENV.filter((k) => k !== 'DISCORD_TOKEN'),
      ),
    ).toEqual(["discord's DISCORD_TOKEN is not in SECRET_ENV (src/core/secret-scrub.ts)"]);
  });

  it('each registered platform has its admins and channel list in the config, checked by its own id form', () => {
    const config = parseConfig({ admins: { slack: ['U012ABCDEF'], discord: ['123456789012345678'] }, channels: { slack: ['C1'], discord: ['2'] } });
    for (const a of registeredAdapters()) {
      expect(config.admins[a.name]).toHaveLength(1);
      expect(config.channels[a.name]).toHaveLength(1);
      expect(a.isAdmin(config, config.admins[a.name][0])).toBe(true);
      expect(a.isAdmin(config, 'U999NOTADMIN')).toBe(false);
    }
    expect(() => parseConfig({ admins: { slack: ['123456789012345678'] } })).toThrow(/admins\.slack\.0: a Slack user ID like U012ABCDEF/);
    expect(() => parseConfig({ admins: { matrix: ['@a:b'] } })).toThrow(ConfigError);
    expect(() => parseConfig({ channels: { console: ['x'] } })).toThrow(/unknown key "console"/);
    // A Discord role id makes its members admins; Slack has no roles the bot reads.
    expect(CHAT_ADAPTERS.discord.isAdmin(parseConfig({ admins: { discord: ['55555'] } }), '66666', ['55555'])).toBe(true);
  });

  it("each adapter's environment is checked at start and turns it on by its token alone", () => {
    for (const a of registeredAdapters()) {
      expect(Object.keys(a.env.shape)).toContain(a.token);
      expect(() => parseEnv({ [a.token]: 'x' })).toThrow(new RegExp(`${a.token}: `));
      expect(a.settingsFrom({})).toBeNull();
      expect(howToSetAChatToken()).toContain(a.token);
    }
    expect(chatModeOf({})).toEqual({ mode: 'console chat', why: 'neither SLACK_BOT_TOKEN nor DISCORD_TOKEN is set' });
    expect(chatModeOf({ DISCORD_TOKEN: 'd'.repeat(30), SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }).mode).toBe('Slack Socket Mode and Discord');
  });
});
