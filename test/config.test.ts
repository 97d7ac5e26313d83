// Settings fail fast, naming every bad key (config file and environment), and never echo secrets.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.js';
import { parseEnv } from '../src/adapters/index.js';

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

describe('config errors that help (issue 13, item 5)', () => {
  const runWith = (yaml: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-cfg-'));
    const file = join(dir, 'gpu-doctor.yaml');
    writeFileSync(file, yaml);
    return spawnSync(process.execPath, ['bin/gpu-doctor', 'status', '--config', file], { encoding: 'utf8', timeout: 60_000 });
  };

  it('a typo inside a host or digest entry is an error with its path, the nearest valid key and the YAML line; a bad cron or time zone is named by the schema', () => {
    const r = runWith(
      [
        'hosts:',
        '  - name: gpu1',
        '    host: 10.0.0.5',
        '    usr: ml',
        'watch:',
        '  enabled: true',
        '  digets: []',
        '  digests:',
        '    - platform: slack',
        '      channel: C1',
        '      cron: "0 25 * * *"',
        '      timezone: Europe/Berln',
        '',
      ].join('\n'),
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('hosts.0: unknown key "usr" (did you mean "user"?) (line 4)');
    expect(r.stderr).toContain('watch: unknown key "digets" (did you mean "digests"?) (line 7)');
    expect(r.stderr).toMatch(/watch\.digests\.0\.cron: a cron expression[^\n]*\(line 11\)/);
    expect(r.stderr).toMatch(/watch\.digests\.0\.timezone: an IANA time zone[^\n]*\(line 12\)/);
  });

  it('broken YAML names its line', () => {
    const r = runWith('hosts:\n  - name: [\n');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/line \d+: not valid YAML/);
  });

  it('a valid cron and time zone pass', () => {
    expect(
      parseConfig({ watch: { digests: [{ platform: 'console', channel: 'x', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }] } }).watch.digests[0].timezone,
    ).toBe('Europe/Berlin');
  });
});
