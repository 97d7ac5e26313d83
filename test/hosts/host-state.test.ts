// /healthz's per-host state and the per-host metrics hook follow what the last query saw.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createHostsService } from '../../src/hosts/service.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describe('host state for /healthz and /metrics', () => {
  it("records each known host's last outcome; unknown names are not recorded", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-state-'));
    const config = parseConfig({
      data_dir: dir,
      ssh: { known_hosts: join(dir, 'known_hosts'), connect_timeout_ms: 2000 },
      hosts: [{ name: 'down', host: '127.0.0.1', port: 1, user: 'ml' }],
    });
    const hosts = createHostsService(config, dir, withSqliteRegistry({ config, baseDir: dir }).registry);
    const seen: [string, boolean][] = [];
    hosts.onResult = (h, _s, ok) => seen.push([h, ok]);
    try {
      expect(hosts.hostStates()).toEqual({ down: 'not queried yet' });
      const [r, unknown] = await hosts.status(['down', 'nosuch']);
      expect(r.ok).toBe(false);
      expect(unknown).toMatchObject({ ok: false, error: 'unknown host' });
      expect(hosts.hostStates().down).toBe(r.ok ? 'ok' : (r as { error: string }).error);
      expect(hosts.hostStates().down).not.toBe('ok');
      expect(seen).toEqual([['down', false]]);
    } finally {
      await hosts.close();
    }
  });
});
