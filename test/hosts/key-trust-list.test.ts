// `/gpu hosts list` says where each SSH host's key is trusted from (issue 25 §3): a pin in the config, a
// key or an @cert-authority in known_hosts, or nothing (the first connection would be refused). Before, a
// host without a pin always read "(known_hosts)", also when known_hosts did not hold it or only revoked it.
// Real ssh-keygen keys in a real known_hosts file, the real hosts service and command registry; listing
// connects to nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import { parseConfig } from '../../src/config.js';
import type { CommandContext } from '../../src/core/command.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-keytrust-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function publicKey(name: string): string {
  const file = join(root, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file, '-C', name]);
  return readFileSync(file + '.pub', 'utf8')
    .split(' ')
    .slice(0, 2)
    .join(' ');
}

describe('hosts list: where each host key is trusted from', () => {
  const client = join(root, 'client');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', client]);
  const knownHosts = join(root, 'known_hosts');
  writeFileSync(
    knownHosts,
    [
      `[10.1.0.2]:2201 ${publicKey('listed')}`,
      `@cert-authority *.cluster.example ${publicKey('ca')}`,
      `@revoked 10.1.0.3 ${publicKey('revoked')}`,
      `10.1.0.99 ${publicKey('elsewhere')}`,
    ].join('\n') + '\n',
  );
  const pin = 'SHA256:' + 'A'.repeat(43);
  const config = parseConfig({
    data_dir: join(root, 'data'),
    ssh: { identity_file: client, known_hosts: knownHosts },
    hosts: [
      { name: 'pinned', host: '10.1.0.1', host_key: pin },
      { name: 'listed', host: '10.1.0.2', port: 2201 },
      { name: 'signed', host: 'node7.cluster.example' },
      { name: 'revoked', host: '10.1.0.3' },
      { name: 'stranger', host: '10.1.0.4' },
      { name: 'otherport', host: '10.1.0.2' },
    ],
  });
  const registry = new CommandRegistry(allCommands());
  const ctx = (locale?: 'zh'): CommandContext => ({
    platform: 'console',
    userId: 'u',
    isAdmin: false,
    ...(locale ? { locale } : {}),
    services: { hosts: new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null })) } as unknown as Services,
  });
  const rowOf = (text: string, name: string) => text.split('\n').find((l) => l.trimStart().startsWith(name + ' ')) ?? '';

  it('names the pin, known_hosts, a certificate authority, or that nothing trusts the key', async () => {
    const { reply } = await registry.dispatch('/gpu hosts list', ctx());
    const text = renderText(reply);
    expect(rowOf(text, 'pinned')).toContain(`${pin} (pinned in config)`);
    expect(rowOf(text, 'listed')).toMatch(/known_hosts\s*$/);
    expect(rowOf(text, 'signed')).toContain('known_hosts @cert-authority');
    // A revoked key trusts nothing; a key listed for another port is not this host's.
    for (const name of ['revoked', 'stranger', 'otherport']) expect(rowOf(text, name)).toContain(`not trusted: /gpu hosts trust ${name}`);
    expect(text).not.toContain('(known_hosts)');
  });

  it('says it in Chinese too', async () => {
    const { reply } = await registry.dispatch('/gpu hosts list', ctx('zh'));
    const text = renderText(reply);
    expect(rowOf(text, 'stranger')).toContain('未信任');
    expect(rowOf(text, 'pinned')).toContain('配置文件中固定');
  });
});
