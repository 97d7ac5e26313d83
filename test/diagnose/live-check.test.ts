// A diagnosis checked against the live host (issue 14 §4), through the real registry, the real
// SSH-backed hosts service and a real sshd serving recorded nvidia-smi output (8x H200, vLLM ranks).
// The pasted log is a real one (test/fixtures/eval-dev/003-cuda_oom.log, yolov5#2510); the line that
// names the host (a prompt, or `host:NAME`) is the message a user would type around it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { renderText } from '../../src/adapters/console/render.js';
import type { CommandContext } from '../../src/core/command.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { hostsNamedIn } from '../../src/diagnose/live-check.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { freePort, makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

const LOG = readFileSync(resolve(import.meta.dirname, '../fixtures/eval-dev/003-cuda_oom.log'), 'utf8');

describeWithSshd('diagnose adds what the named host holds right now', 'test/diagnose/live-check.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-live-'));
  let inst: SshdInstance;
  let svc: SourcedHostsService;
  const registry = new CommandRegistry(allCommands());
  let ctx: CommandContext;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    inst = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    const deadPort = await freePort();
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, known_hosts: join(root, 'known_hosts'), connect_timeout_ms: 3000, exec_timeout_ms: 5000 },
      hosts: [
        { name: 'gpu-a', host: '127.0.0.1', port: inst.port, host_key: inst.fingerprint },
        { name: 'gpu-down', host: '127.0.0.1', port: deadPort, host_key: inst.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    ctx = { platform: 'console', userId: 'u1', isAdmin: false, services: { rules: await loadRuleBase(), hosts: svc } };
  });

  afterAll(async () => {
    await svc?.close();
    await inst?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a prompt naming the host: the log's free figure next to who holds that GPU now", async () => {
    const out = await registry.dispatch(`/gpu diagnose (yolo) alice@gpu-a:~/yolov5$ tail train.log\n${LOG}`, ctx);
    const text = renderText(out.reply);
    const section = out.reply.sections.find((s) => s.heading === 'Right now on gpu-a');
    expect(section, text).toBeDefined();
    // The log: 12.31 MiB free on GPU 0. The host now: GPU 0 of the recorded H200 table, held by alice's vLLM rank.
    expect(section!.text).toMatch(/^The log says 12 MiB was free on GPU 0 when it failed\./);
    // (The harness serves the recorded H200 table and the recorded compute-apps list of the same cluster.)
    expect(section!.text).toMatch(/\nGPU 0: 82\.49 GiB of 140\.40 GiB used, 57\.91 GiB free; alice \(pid 1328667\) holds 126\.96 GiB$/);
    // It comes right after the log's own "who holds the memory".
    const headings = out.reply.sections.map((s) => s.heading);
    expect(headings.indexOf('Right now on gpu-a')).toBe(headings.indexOf('Who holds the memory') + 1);
    // Another GPU is offered only when it has clearly more room (here every GPU has about the same).
    expect(section!.text).not.toMatch(/CUDA_VISIBLE_DEVICES/);
  });

  it('`host:NAME` before the paste names the host explicitly', async () => {
    const out = await registry.dispatch(`/gpu diagnose host:gpu-a ${LOG}`, ctx);
    expect(out.reply.sections.map((s) => s.heading)).toContain('Right now on gpu-a');
  });

  it('a paste that names no registered host reads no host: nothing is run on any server', async () => {
    const before = readFileSync(inst.auditLog, 'utf8');
    const out = await registry.dispatch(`/gpu diagnose ${LOG}`, ctx);
    expect(out.reply.sections.some((s) => s.heading?.startsWith('Right now'))).toBe(false);
    expect(readFileSync(inst.auditLog, 'utf8')).toBe(before);
  });

  it('a named host that is down: the diagnosis still answers, with one line saying the host could not be read', async () => {
    const out = await registry.dispatch(`/gpu diagnose host:gpu-down ${LOG}`, ctx);
    expect(out.outcome).toBe('ok');
    const section = out.reply.sections.find((s) => s.heading === 'Right now on gpu-down');
    expect(section?.text).toMatch(/^Could not read gpu-down now \(.+\); the diagnosis above is from the log alone\.$/);
    expect(out.reply.sections.some((s) => s.heading === 'Fix')).toBe(true);
  });
});

it('hostsNamedIn: only registered names, as prompts, host:NAME or whole words; at most two', () => {
  const reg = ['gpu3', 'gpu30', 'box'];
  expect(hostsNamedIn('host:gpu3 RuntimeError: CUDA out of memory', reg)).toEqual(['gpu3']);
  expect(hostsNamedIn('[alice@GPU30 ~]$ python train.py', reg)).toEqual(['gpu30']);
  expect(hostsNamedIn('ssh gpu3 then on gpu30.lab nothing', reg)).toEqual(['gpu3', 'gpu30']);
  expect(hostsNamedIn('mygpu3 and gpu3x and box_1', reg)).toEqual([]);
  expect(hostsNamedIn('alice@unknown:~$ run', reg)).toEqual([]);
  expect(hostsNamedIn('bob@' + 'a'.repeat(5000) + ':~$ ' + 'x@'.repeat(100_000), reg)).toEqual([]);
});
