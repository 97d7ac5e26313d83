// The config's `owners:` is as strict as hosts and digests: every bad key named with its line, an
// unknown key with the nearest valid one, and names that carry no chat markup.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../src/config.js';
import { OwnerDirectory } from '../../src/owners/directory.js';

const load = (yaml: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'gd-owners-cfg-')), 'config.yaml');
  writeFileSync(file, yaml);
  return () => loadConfig(file);
};

describe('owners in the config', () => {
  it('names each bad entry: unknown key with did-you-mean, a bad unix user, bad ids and names, a misspelt dm_owners', () => {
    const run = load(
      [
        'owners:',
        '  alice: { slack: U012ABCDEF, name: Alice }',
        '  bob@gpu3: { discord: "123456789012345678", slak: U0BOB }',
        '  "Bad User": { name: Carol }',
        '  dave: { slack: dave, discord: "12", name: "<!channel>" }',
        'watch:',
        '  digests:',
        '    - { platform: slack, channel: C1, cron: "0 9 * * *", dm_owner: true }',
        '',
      ].join('\n'),
    );
    expect(run).toThrow(ConfigError);
    let message = '';
    try {
      run();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('owners.bob@gpu3: unknown key "slak" (did you mean "slack"?) (line 3)');
    expect(message).toContain('owners: "Bad User" is not a valid key: a unix user (alice) or unix user@host (alice@gpu3) (line 4)');
    expect(message).toContain('owners.dave.slack: a Slack user ID like U012ABCDEF (line 5)');
    expect(message).toContain('owners.dave.discord: a Discord user ID');
    expect(message).toContain("owners.dave.name: a display name: letters, digits, blanks, . ' - (max 64)");
    expect(message).toContain('watch.digests.0: unknown key "dm_owner" (did you mean "dm_owners"?) (line 8)');
  });

  it('a host-scoped entry wins on its host; the plain one everywhere else', () => {
    const config = parseConfig({
      owners: { alice: { name: 'Alice', slack: 'U012ABCDEF' }, 'alice@gpu3': { name: 'Other Alice', discord: '123456789012345678' } },
    });
    const d = new OwnerDirectory(config.owners, null);
    expect(d.lookup('gpu1', 'alice')).toEqual({ unixUser: 'alice', host: null, name: 'Alice', slack: 'U012ABCDEF' });
    expect(d.lookup('gpu3', 'alice')).toEqual({ unixUser: 'alice', host: 'gpu3', name: 'Other Alice', discord: '123456789012345678' });
    expect(d.lookup('gpu3', 'bob')).toBeNull();
    expect(parseConfig({}).owners).toEqual({});
  });
});
