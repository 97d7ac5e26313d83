// Settings fail fast, naming every bad key (config file and environment), and never echo secrets.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/core/config.js';
import { parseEnv } from '../src/core/env.js';

describe('config file', () => {
  it('names every bad key with what was expected', () => {
    let message = '';
    try {
      parseConfig({ hosts: [{ name: 'gpu 1', host: 'h;rm -rf /' }], ssh: { connect_timeout_ms: 'soon' }, bogus: 1 });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/hosts\.0\.name: letters, digits/);
    expect(message).toMatch(/hosts\.0\.host: a host name/);
    expect(message).toMatch(/ssh\.connect_timeout_ms/);
    expect(message).toMatch(/bogus|Unrecognized key/);
  });

  it('channels.allow_dms: a boolean, unset by default', () => {
    expect(parseConfig({}).channels.allow_dms).toBeUndefined();
    expect(parseConfig({ channels: { slack: ['C1'], allow_dms: true } }).channels.allow_dms).toBe(true);
    expect(() => parseConfig({ channels: { allow_dms: 'yes' } })).toThrow(/channels\.allow_dms/);
  });

  it('defaults: no hosts (localhost is used), data under ./data', () => {
    const c = parseConfig({});
    expect(c.hosts).toEqual([]);
    expect(c.data_dir).toBe('./data');
  });
});

describe('environment', () => {
  it('names every bad key and never prints a secret', () => {
    let message = '';
    try {
      parseEnv({ SLACK_BOT_TOKEN: 'xoxp-user-token-secret-123', PORT: 'eighty', DISCORD_APPLICATION_ID: 'abc' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/SLACK_BOT_TOKEN: a bot token starting with xoxb-/);
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/DISCORD_APPLICATION_ID/);
    expect(message).not.toContain('xoxp-user-token-secret-123');
  });

  it('a Slack bot token needs Socket Mode or HTTP mode credentials', () => {
    expect(() => parseEnv({ SLACK_BOT_TOKEN: 'xoxb-1-2-3' })).toThrow(/SLACK_APP_TOKEN \(Socket Mode\) or SLACK_SIGNING_SECRET/);
    expect(parseEnv({ SLACK_BOT_TOKEN: 'xoxb-1-2-3', SLACK_APP_TOKEN: 'xapp-1-2', PORT: '' }).PORT).toBeUndefined();
  });
});
