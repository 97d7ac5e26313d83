// What nvitop, gpustat and DCGM users expect beside memory (issue 25 §2), read over real sshd from the
// fake GPU hosts of sshd-harness.ts (real nvidia-smi fixtures; the ps columns are synthetic, labelled there)
// and shown as `/gpu status` shows them (statusReply through the console renderer).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { parseConfig } from '../../src/config.js';
import type { HostStatusResult } from '../../src/core/services.js';
import { statusReply } from '../../src/hosts/render.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describeWithSshd('status shows what the peers show', 'test/hosts/peer-readings.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-peers-'));
  const inst: Record<string, SshdInstance> = {};
  let svc: SourcedHostsService;
  const shown = async (names: string[], loc?: 'en' | 'zh') => renderText(statusReply(await svc.status(names), undefined, loc));
  const ok = (r: HostStatusResult) => {
    if (!r.ok) throw new Error(r.error);
    return r;
  };

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    [inst.h200, inst.h100, inst.flagged, inst.old, inst.nofields] = await Promise.all([
      startSshd(join(root, 'h200'), key.pub, { skipShellRc: true, data: 'h200' }),
      startSshd(join(root, 'h100'), key.pub, { skipShellRc: true, data: 'h100' }),
      startSshd(join(root, 'flagged'), key.pub, { skipShellRc: true, data: 'h100', health: 'remap-pending' }),
      startSshd(join(root, 'old'), key.pub, { skipShellRc: true, data: 'h100', health: 'old-driver' }),
      startSshd(join(root, 'nofields'), key.pub, { skipShellRc: true, data: 'h100', health: 'no-fields' }),
    ]);
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 6000, exec_timeout_ms: 8000 },
      hosts: Object.entries(inst).map(([name, i]) => ({ name, host: '127.0.0.1', port: i.port, host_key: i.fingerprint })),
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await Promise.all(Object.values(inst).map((i) => i.stop()));
    rmSync(root, { recursive: true, force: true });
  });

  it('per process: run time, CPU % and host RSS from the one ps the status command runs', async () => {
    const h200 = ok((await svc.status(['h200']))[0]);
    const first = h200.processes.find((p) => p.pid === 1328667)!;
    expect(first).toMatchObject({ user: 'alice', elapsedSeconds: 3600, cpuPct: 97.5, rssBytes: 20 * 2 ** 30 });
    const hidden = h200.processes.find((p) => p.pid === 1758887)!;
    expect(hidden.cpuPct ?? null).toBeNull();
    const text = await shown(['h200']);
    expect(text).toContain('Run time');
    expect(text).toContain('CPU (avg)');
    expect(text).toContain('Host RSS');
    const row = text.split('\n').find((l) => l.includes('1328667'))!;
    expect(row).toMatch(/1h00m/);
    expect(row).toMatch(/97\.5%/);
    expect(row).toMatch(/20\.0 GiB/);
    const h100 = ok((await svc.status(['h100']))[0]);
    expect(h100.processes.map((p) => [p.elapsedSeconds, p.cpuPct, p.rssBytes])).toEqual(Array(3).fill([120, 99, 2 * 2 ** 30]));
  });
  it('per GPU: power draw and cap, uncorrected ECC and why clocks are held, from the health query', async () => {
    const h100 = ok((await svc.status(['h100']))[0]);
    expect(h100.gpus[0].health).toEqual({
      powerDrawW: 631.95,
      powerLimitW: 700,
      eccUncorrectedVolatile: 0,
      retiredPagesPending: null,
      remappedRowsPending: false,
      remappedRowsFailure: false,
      clockReasons: [],
    });
    const h200 = ok((await svc.status(['h200']))[0]);
    expect(h200.gpus.every((g) => g.health?.powerLimitW === 700 && g.health.eccUncorrectedVolatile === 0)).toBe(true);
    expect(h200.gpus[0].health).toMatchObject({ powerDrawW: 115, powerLimitW: 700, eccUncorrectedVolatile: 0, remappedRowsPending: null });
    const reply = statusReply([h100, h200]);
    expect(reply.severity).toBe('ok');
    const text = renderText(reply);
    expect(text).toContain('Power');
    expect(text).toContain('632/700 W');
    expect(text).toContain('115/700 W');
    expect(text).toContain('ECC uncorr.');
    expect(text).not.toContain('GPUs that need attention');
  });

  it('a GPU with a pending row remap (real nvidia-smi -q state) is flagged with what to do, in en and zh', async () => {
    const flagged = ok((await svc.status(['flagged']))[0]);
    expect(flagged.gpus[0].health?.remappedRowsPending).toBe(true);
    const reply = statusReply([flagged]);
    expect(reply.severity).toBe('warning');
    const en = renderText(reply);
    expect(en).toContain('GPUs that need attention');
    expect(en).toMatch(/GPU 0: a memory row remap is pending .* Drain it .* reset it \(`nvidia-smi -r -i 0`\) or reboot the host/);
    const zh = await shown(['flagged'], 'zh');
    expect(zh).toContain('需要处理的 GPU');
    expect(zh).toContain('nvidia-smi -r -i 0');
  });

  it('an older driver answers with the older field names; one that knows none of them still answers status', async () => {
    const [old, none] = (await svc.status(['old', 'nofields'])).map(ok);
    expect(old.gpus[0].health).toMatchObject({ powerDrawW: 631.95, powerLimitW: 700, remappedRowsPending: null, clockReasons: [] });
    expect(none.gpus[0]).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', memoryTotalMiB: 81559 });
    expect(none.gpus[0].health).toBeUndefined();
    expect(none.processes).toHaveLength(3);
    expect(none.warning).toBeUndefined();
    expect(renderText(statusReply([none]))).not.toContain('Power');
  });
});
