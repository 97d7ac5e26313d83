// The `host_groups:` config: a `source: prometheus` group's keys, its credentials from the environment
// (named when missing, never shown), and host names unique across SSH hosts and every group.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, sshHostsOf } from '../../src/config.js';
import { groupSettings } from '../../src/sources/prometheus/config.js';

const prom = (extra: Record<string, unknown> = {}) => ({
  name: 'cluster',
  source: 'prometheus',
  url: 'http://prom.lab:9090',
  hosts: [{ name: 'gpu5', match: '10.0.0.5' }, { name: 'gpu6' }],
  ...extra,
});

const problem = (doc: unknown): string => {
  try {
    parseConfig(doc);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a config error');
};

describe('host_groups', () => {
  it('takes a prometheus group and an ssh group, with defaults', () => {
    const c = parseConfig({
      host_groups: [prom(), { name: 'lab', source: 'ssh', hosts: [{ name: 'gpu1', host: '10.0.0.1' }] }],
      hosts: [{ name: 'gpu0', host: '10.0.0.0' }],
    });
    expect(sshHostsOf(c).map((h) => h.name)).toEqual(['gpu0', 'gpu1']);
    const s = groupSettings(c.host_groups[0] as Parameters<typeof groupSettings>[0], {});
    expect(s).toMatchObject({
      timeoutMs: 10000,
      historyStepS: 60,
      join: { gpuLabel: 'instance', nodeLabel: 'instance', stripPort: true },
      hosts: [
        { name: 'gpu5', match: '10.0.0.5' },
        { name: 'gpu6', match: 'gpu6' },
      ],
    });
    expect(s.auth).toBeUndefined();
  });

  it('names unknown keys, bad urls, bad label names and match values', () => {
    expect(problem({ host_groups: [prom({ tokn: 'x' })] })).toMatch(/host_groups\.0: unknown key "tokn"/);
    expect(problem({ host_groups: [prom({ url: 'http://u:p@prom:9090' })] })).toMatch(/no credentials in it/);
    expect(problem({ host_groups: [prom({ url: 'ftp://prom' })] })).toMatch(/host_groups\.0\.url/);
    expect(problem({ host_groups: [prom({ join: { gpu_label: 'in stance' } })] })).toMatch(/a Prometheus label name/);
    expect(problem({ host_groups: [prom({ hosts: [{ name: 'x', match: 'a"} or vector(1)' }] })] })).toMatch(/host_groups\.0\.hosts\.0\.match/);
    expect(problem({ host_groups: [prom({ bearer_token_env: 'T', basic_auth: { username: 'u', password_env: 'P' } })] })).toMatch(/choose one/);
    expect(problem({ host_groups: [prom({ source: 'snmp' })] })).toMatch(/host_groups\.0/);
  });

  it('a host name is listed once across hosts and every group', () => {
    expect(problem({ hosts: [{ name: 'gpu5', host: '10.0.0.5' }], host_groups: [prom()] })).toMatch(/"gpu5" is listed twice/);
  });

  it('reads the credentials from the environment, naming a missing variable and never its value', () => {
    const c = parseConfig({
      host_groups: [
        prom({ bearer_token_env: 'PROM_TOKEN' }),
        prom({ name: 'b', basic_auth: { username: 'bot', password_env: 'PROM_PW' }, hosts: [{ name: 'gpu9' }] }),
      ],
    });
    const [a, b] = c.host_groups as Parameters<typeof groupSettings>[0][];
    expect(() => groupSettings(a, {})).toThrow('host_groups.cluster.bearer_token_env: PROM_TOKEN is not set');
    expect(groupSettings(a, { PROM_TOKEN: 'tok' }).auth).toEqual({ kind: 'bearer', token: 'tok' });
    expect(groupSettings(b, { PROM_PW: 'pw' }).auth).toEqual({ kind: 'basic', username: 'bot', password: 'pw' });
  });
});
