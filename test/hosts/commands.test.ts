// The chat commands through the real CommandRegistry (commands/index.ts) and the real SSH-backed
// hosts service against a real sshd: admin gating of `hosts add`, and `status` rendering its table.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { CommandContext } from '../../src/core/command.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import type { Services } from '../../src/core/services.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { makeClientKey, startSshd, type SshdInstance } from './sshd-harness.js';
import { describeWithSshd } from './sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describeWithSshd('status / hosts commands through the registry', 'test/hosts/commands.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-cmds-'));
  let inst: SshdInstance;
  let svc: SourcedHostsService;
  const registry = new CommandRegistry(allCommands());
  const ctx = (isAdmin: boolean): CommandContext => ({
    platform: 'slack',
    userId: isAdmin ? 'UADMIN01' : 'UPLAIN01',
    isAdmin,
    // status and hosts only use the hosts service; the rule base is for `diagnose`.
    services: { hosts: svc } as unknown as Services,
  });

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    inst = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 5000, exec_timeout_ms: 5000 },
      hosts: [{ name: 'gpu-a', host: '127.0.0.1', port: inst.port, host_key: inst.fingerprint }],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
  });

  afterAll(async () => {
    await svc?.close();
    await inst?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a non-admin `hosts add` is denied without touching the registry or the network', async () => {
    const before = svc.registry.list().map((h) => h.name);
    const auditBefore = readFileSync(inst.auditLog, 'utf8');
    const out = await registry.dispatch(`/gpu hosts add sneaky root@127.0.0.1:${inst.port} --trust ${inst.fingerprint}`, ctx(false));
    expect(out.outcome).toBe('denied');
    expect(out.reply.title).toBe('That needs an admin');
    expect(svc.registry.list().map((h) => h.name)).toEqual(before);
    expect(svc.registry.get('sneaky')).toBeNull();
    expect(readFileSync(inst.auditLog, 'utf8')).toBe(auditBefore);
    for (const line of ['/gpu hosts remove gpu-a', '/gpu hosts trust gpu-a']) expect((await registry.dispatch(line, ctx(false))).outcome).toBe('denied');
    expect(svc.registry.get('gpu-a')).not.toBeNull();
    // Reading is open to everyone.
    const list = await registry.dispatch('/gpu hosts list', ctx(false));
    expect(list.outcome).toBe('ok');
    expect(renderText(list.reply)).toMatch(new RegExp(`gpu-a +\\S+@127\\.0\\.0\\.1:${inst.port} +config`));
  });

  it('an admin `hosts add --trust` trusts only the fingerprint read on the host: another one, or none, adds nothing', async () => {
    const user = process.env.USER ?? 'root';
    const other = 'SHA256:' + 'A'.repeat(43);
    const wrong = await registry.dispatch(`/gpu hosts add gpu-wrong ${user}@127.0.0.1:${inst.port} --trust ${other}`, ctx(true));
    expect(renderText(wrong.reply)).toContain(`presents host key ${inst.fingerprint}, not ${other}`);
    expect(svc.registry.get('gpu-wrong')).toBeNull();
    const bare = await registry.dispatch(`/gpu hosts add gpu-bare ${user}@127.0.0.1:${inst.port} --trust`, ctx(true));
    expect(bare.outcome).not.toBe('ok');
    expect(svc.registry.get('gpu-bare')).toBeNull();
  });

  it('an admin `hosts add` does reach the registry', async () => {
    const out = await registry.dispatch(`/gpu hosts add gpu-late ${process.env.USER ?? 'root'}@127.0.0.1:${inst.port} --trust ${inst.fingerprint}`, ctx(true));
    expect(out.outcome, JSON.stringify(out.reply)).toBe('ok');
    expect(svc.registry.get('gpu-late')).toMatchObject({ origin: 'runtime', hostKey: inst.fingerprint });
    expect((await registry.dispatch('/gpu hosts remove gpu-late', ctx(true))).outcome).toBe('ok');
    expect(svc.registry.get('gpu-late')).toBeNull();
  });

  it('`status` renders the GPU and process tables, and names an unknown host in one line', async () => {
    const out = await registry.dispatch('/gpu status gpu-a nosuchhost', ctx(false));
    expect(out.outcome).toBe('ok');
    expect(out.reply.title).toBe('GPU status: 1/2 hosts answered');
    const [gpus, procs] = out.reply.sections;
    expect(gpus.heading).toMatch(/^gpu-a \(\d+ ms\)$/);
    expect(gpus.table!.columns).toEqual(['GPU', 'Name', 'Memory', 'Util', 'Temp', 'Power', 'ECC uncorr.', 'Clocks held by', 'Error']);
    expect(gpus.table!.rows).toHaveLength(8);
    expect(gpus.table!.rows[0].slice(0, 8)).toEqual(['0', 'NVIDIA H200', '██████░░░░ 84474/143771 MiB', '1%', '26°C', '115/700 W', '0', 'n/a']);
    expect(procs.table!.columns).toEqual(['GPU', 'User', 'PID', 'GPU mem', 'Run time', 'CPU (avg)', 'Host RSS', 'Command']);
    expect(procs.table!.rows).toHaveLength(8);
    expect(procs.table!.rows[0].slice(0, 4)).toEqual(['0', 'alice', '1328667', '130004 MiB']);
    const text = renderText(out.reply);
    expect(text).toContain('[!] GPU status: 1/2 hosts answered');
    expect(text).toMatch(/GPU +Name +Memory +Util +Temp/);
    expect(text).toContain('in a container (pid not visible on the host)');
    expect(text).toContain('Unreachable or failing:\nnosuchhost: unknown host');
  });
});
