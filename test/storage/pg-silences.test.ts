// /gpu silence in a real PostgreSQL (Debian's postgresql package, started by the test), seen by two
// replicas: two pools and two stores on one database, as two bot processes have them. A silence set
// through one quiets the other's alerts and is listed and cancelled through either; the cap on silences in
// force holds with adds racing on both; two cancels at once end a silence once. Commands go through the
// real command registry.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { renderText } from '../../src/adapters/console/render.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PgSilenceStore } from '../../src/storage/postgres/silences.js';
import { Holders, Silences } from '../../src/watch/silences.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

describeWithPostgres('Postgres silences, two replicas', 'test/storage/pg-silences.test.ts', () => {
  let server: PgInstance;
  let a: Pool;
  let b: Pool;
  const registry = new CommandRegistry(allCommands());
  const owners = new OwnerDirectory({ alice: { name: 'Alice Liddell', slack: 'UALICE001' } }, null);

  beforeAll(async () => {
    server = await startPostgres();
    const url = await server.createDatabase('silences');
    a = openPool({ url, applicationName: 'replica-a' });
    b = openPool({ url, applicationName: 'replica-b' });
    await Promise.all([migrate(a), migrate(b)]);
  }, 60_000);

  afterAll(async () => {
    await a?.end();
    await b?.end();
    await server?.stop();
  });

  /** One replica's silences, whose last round saw alice's process on gpu1 GPU 0. */
  function replica(pool: Pool): Silences {
    const holders = new Holders();
    holders.add([
      {
        ts: Date.now(),
        host: 'gpu1',
        gpu: 0,
        gpuTotalMiB: 81920,
        gpuUsedMiB: 30000,
        utilizationPct: 0,
        pid: 1,
        processStart: 0,
        user: 'alice',
        command: 'python',
        processMiB: 30000,
      },
    ]);
    return new Silences(new PgSilenceStore(pool), holders, () => owners);
  }
  const ask = async (silences: Silences, line: string, userId: string, isAdmin = false) =>
    renderText((await registry.dispatch(line, { platform: 'slack', userId, isAdmin, services: { watch: { silences } } as unknown as Services })).reply);

  it('set through one replica (by the owner), listed, honoured and cancelled through the other', async () => {
    const [ra, rb] = [replica(a), replica(b)];
    expect(await ask(ra, '/gpu silence gpu1 1 2h', 'UALICE001')).toContain('Not yours to change');
    expect(await ask(ra, '/gpu silence gpu1 0 2h', 'UALICE001')).toMatch(/Silence #\d+: gpu1 GPU 0 until/);
    const now = Date.now();
    expect(rb.silenced('gpu1', 0, now)).toBe(false); // not read yet
    await rb.refresh(now);
    expect(rb.silenced('gpu1', 0, now)).toBe(true);
    expect(rb.silenced('gpu1', 1, now)).toBe(false);
    expect(rb.silenced('gpu1', 0, now + 3 * 3_600_000)).toBe(false);
    const listed = await ask(rb, '/gpu silence list', 'UBOB00001');
    expect(listed).toContain('1 silence in force');
    expect(listed).toContain('UALICE001 (slack)');
    const [s] = await rb.list();
    expect(await ask(rb, `/gpu silence cancel ${s.id}`, 'UBOB00001')).toContain('can be cancelled by an admin or by whoever set it');
    // Two cancels at once, one per replica: one ends it, the other finds none in force.
    const both = await Promise.all([
      ra.cancel(s.id, { platform: 'slack', userId: 'UALICE001', isAdmin: false }),
      rb.cancel(s.id, { platform: 'slack', userId: 'UADMIN01', isAdmin: true }),
    ]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
    expect(both.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(['none']);
    await ra.refresh(now);
    expect(ra.silenced('gpu1', 0, now)).toBe(false);
    expect(await ask(ra, '/gpu silence list', 'UALICE001')).toContain('No silences in force');
  });

  it('the cap on silences in force holds with adds racing on both replicas', async () => {
    const [sa, sb] = [new PgSilenceStore(a), new PgSilenceStore(b)];
    const now = Date.now();
    const add = (s: PgSilenceStore, i: number) =>
      s.add({ host: `cap${i}`, gpu: null, untilMs: now + 3_600_000, createdMs: now, byPlatform: 'slack', byUser: 'UADMIN01' }, 4);
    const added = await Promise.all(Array.from({ length: 12 }, (_, i) => add(i % 2 ? sa : sb, i)));
    expect(added.filter((x) => x !== null)).toHaveLength(4);
    expect((await sb.active(now)).filter((x) => x.host.startsWith('cap'))).toHaveLength(4);
  });
});
