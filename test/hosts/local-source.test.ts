// The built-in localhost (no hosts configured) reads what an SSH host's status command reads: the health
// query (power, ECC, retired pages / row remaps, clock reasons) with the older field names where the driver
// refuses the newer, and the MIG instances. Through the bot as `createApp` builds it; the GPU tools are the
// sshd harness's fakes (real fixture outputs) first on this process's PATH, as they are on the fake hosts'.
// An AMD host (rocm-smi where nvidia-smi is absent) reads the same way.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import { writeFakeGpuTools } from './sshd-harness.js';

describe('localhost reads health and MIG like an SSH host', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-local-'));
  const bin = join(root, 'bin');
  const path = process.env.PATH;
  let app: App;
  const status = async (locale: 'en' | 'zh' = 'en') => {
    const ctx: CommandContext = { platform: 'slack', userId: 'U1LOCAL', isAdmin: false, services: app.services, locale };
    const out = await app.registry.dispatch('/gpu status localhost', ctx);
    return { reply: out.reply, text: renderText(out.reply) };
  };

  beforeAll(async () => {
    process.env.PATH = `${bin}:/usr/bin:/bin`;
    writeFileSync(join(root, 'config.yaml'), `data_dir: ${join(root, 'data')}\n`);
    app = await createApp(join(root, 'config.yaml'));
  });

  afterAll(async () => {
    process.env.PATH = path;
    await app?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('power, ECC and clocks from the health query; a pending row remap (real nvidia-smi -q state) is flagged', async () => {
    writeFakeGpuTools(root, bin, { data: 'h100', health: 'remap-pending' });
    const { reply, text } = await status();
    expect(text).toContain('NVIDIA H100 80GB HBM3');
    expect(text).toContain('632/700 W');
    expect(text).toContain('ECC uncorr.');
    expect(reply.severity).toBe('warning');
    expect(text).toMatch(/GPU 0: a memory row remap is pending .* reset it \(`nvidia-smi -r -i 0`\)/);
    expect((await status('zh')).text).toContain('需要处理的 GPU');
  });

  it('an older driver answers with the older field names; one that knows none still answers status', async () => {
    writeFakeGpuTools(root, bin, { data: 'h100', health: 'old-driver' });
    const old = await status();
    expect(old.text).toContain('632/700 W');
    expect(old.reply.severity).toBe('ok');
    writeFakeGpuTools(root, bin, { data: 'h100', health: 'no-fields' });
    const none = await status();
    expect(none.text).toContain('NVIDIA H100 80GB HBM3');
    expect(none.text).not.toContain('Power');
    expect(none.text).toContain('21198');
  });

  it('an AMD host (rocm-smi, no nvidia-smi): the card and its KFD processes, as on an SSH host', async () => {
    writeFakeGpuTools(root, bin, { data: 'rocm' });
    const { reply, text } = await status();
    expect(reply.sections[0].table!.rows[0].slice(0, 2), text).toEqual(['0', 'Radeon RX 7900 XT']);
    expect(reply.sections[0].table!.rows[0].slice(4, 6), text).toEqual(['28°C', '79/303 W']);
    expect(reply.sections[1].table!.rows.map((r) => [r[1], r[2]])).toEqual([
      ['erin', '55573'],
      ['erin', '55571'],
      ['erin', '55574'],
      ['erin', '55572'],
    ]);
  });

  it('MIG instances with their profiles, as on an SSH host', async () => {
    writeFakeGpuTools(root, bin, { data: 'h200-mig' });
    const { reply, text } = await status();
    const mig = reply.sections.find((s) => s.heading === 'MIG instances')?.table;
    expect(mig, text).toBeDefined();
    expect(mig!.rows.map((r) => r[4])).toEqual(['1c.3g.71gb', '2c.3g.71gb', '2g.35gb', '1g.18gb', '1g.18gb']);
    expect(mig!.rows[1][6]).toBe('12249 (dave), 12250 (dave), 12267 (dave)');
    expect(text).toContain('295/700 W');
  });
});
