// Ops pieces: the audit table, /healthz + /metrics, and secrets never reaching a log line.
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { Metrics } from '../../src/ops/metrics.js';
import { Health, startHealthServer } from '../../src/ops/health.js';
import { createLogger } from '../../src/ops/logger.js';
import { runCommand } from '../../src/adapters/common.js';
import { testDeps } from './helpers.js';

describe('ops', () => {
  it('records every command in the audit table without the paste', async () => {
    const deps = await testDeps();
    await runCommand(deps, {
      platform: 'slack',
      userId: 'U1',
      channelId: 'C1',
      isAdmin: false,
      command: '/gpu diagnose RuntimeError: CUDA out of memory secret-ish paste',
    });
    await runCommand(deps, { platform: 'discord', userId: '123456', isAdmin: false, command: '/gpu nope' });
    const rows = deps.audit.recent();
    expect(rows[0]).toMatchObject({ platform: 'discord', user: '123456', channel: null, command: 'nope', outcome: 'unknown' });
    expect(rows[1]).toMatchObject({ platform: 'slack', command: expect.stringMatching(/^diagnose \(\d+ chars\)$/), outcome: 'ok' });
    expect(JSON.stringify(rows)).not.toContain('secret-ish');
    expect(await deps.metrics.registry.getSingleMetricAsString('gpu_doctor_commands_total')).toMatch(/outcome="unknown"/);
    deps.audit.close();
    const again = AuditStore.inDataDir(deps.dataDir);
    expect(again.recent()).toHaveLength(2);
    again.close();
  });

  it('serves /healthz (503 until every adapter is connected) and /metrics', async () => {
    const metrics = new Metrics();
    const health = new Health(metrics);
    health.set('slack', 'starting');
    const srv = await startHealthServer({ port: 0, host: '127.0.0.1', health, metrics });
    try {
      let r = await fetch(`http://127.0.0.1:${srv.port}/healthz`);
      expect(r.status).toBe(503);
      health.set('slack', 'connected');
      health.hostStates = () => ({ gpu1: 'connected' });
      r = await fetch(`http://127.0.0.1:${srv.port}/healthz`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ ok: true, adapters: { slack: 'connected' }, hosts: { gpu1: 'connected' } });
      const m = await (await fetch(`http://127.0.0.1:${srv.port}/metrics`)).text();
      expect(m).toContain('gpu_doctor_adapter_connected{adapter="slack"} 1');
    } finally {
      await srv.close();
    }
  });

  it('redacts tokens from logs by key and by value', () => {
    const prev = process.env.SLACK_BOT_TOKEN;
    process.env.SLACK_BOT_TOKEN = 'xoxb-1234567890-abcdefghij';
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      destination: new Writable({
        write(c, _e, cb) {
          lines.push(c.toString());
          cb();
        },
      }),
    });
    log.info({ token: 'anything' }, 'a');
    log.error({ err: 'request failed with xoxb-1234567890-abcdefghij' }, 'b');
    log.info({ headers: { authorization: 'Bearer zzz' } }, 'c');
    process.env.SLACK_BOT_TOKEN = prev;
    const out = lines.join('');
    expect(out).not.toContain('xoxb-1234567890');
    expect(out).not.toContain('anything');
    expect(out).not.toContain('zzz');
  });
});
