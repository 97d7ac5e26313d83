// One inbound path (issue 24 §2): the paste policy written once (src/core/inbound.ts), invocations handed to
// the registry already split (text and files as they came), and what comes back keyed (the diagnosis' rule
// on the outcome, sections by key) instead of read back from translated text.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { diagnoseInvocation, pasteOf, readableFile, typedCommand, worthAnswering } from '../../src/core/inbound.js';
import { invocationOf } from '../../src/core/invocation.js';
import { runCommand } from '../../src/adapters/common.js';
import type { CommandContext } from '../../src/core/command.js';
import { testDeps } from '../adapters/helpers.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const CHAT = 'lunch at noon?\nsure\nsee you there';

describe('the paste policy', () => {
  it('a message is a command, a paste, or chatter', () => {
    expect(typedCommand('  /gpu status')).toBe(true);
    expect(typedCommand('gpu status')).toBe(true);
    expect(typedCommand('/GPU')).toBe(true);
    expect(typedCommand('gpus are busy')).toBe(false);
    expect(typedCommand('the /gpu status said')).toBe(false);
    expect(pasteOf(CHAT, [])).toBeNull();
    expect(pasteOf('   ', [])).toBeNull();
    expect(pasteOf(OOM, [])).toEqual({ pasted: true, files: [] });
    // A command typed with a log after it: the log is what the asker wants read.
    expect(pasteOf(`/gpu diagnose\n${OOM}`, [])?.pasted).toBe(true);
    expect(pasteOf('/gpu status gpu1', [])).toBeNull();
  });

  it('files are read by a log name or the platform saying they are text; others are not', () => {
    for (const name of ['train.log', 'RUN.TXT', 'job.out', 'job.err']) expect(readableFile({ name }), name).toBe(true);
    expect(readableFile({ name: 'snippet', mimeType: 'text/plain; charset=utf-8' })).toBe(true);
    expect(readableFile({ name: 'snippet', platformText: true })).toBe(true);
    for (const f of [{ name: 'chart.png', mimeType: 'image/png' }, { name: 'train.log.gz' }, { name: 'notes.md', mimeType: 'text/markdown' }, { name: 'log' }])
      expect(readableFile(f), f.name).toBe(false);
    const files = [{ name: 'a.png' }, { name: 'b.log' }, { name: 'message.txt' }];
    expect(pasteOf('see attached', files)).toEqual({ pasted: false, files: [{ name: 'b.log' }, { name: 'message.txt' }] });
    expect(pasteOf('see attached', [{ name: 'a.png' }])).toBeNull();
  });

  it("a file named as a log is always answered; Discord's message.txt and text-only-by-type files only when they read like a log", () => {
    const chat = Buffer.from(CHAT);
    const log = Buffer.from(OOM);
    expect(worthAnswering({ pasted: false, files: [{ name: 'run.log' }] }, [chat])).toBe(true);
    expect(worthAnswering({ pasted: false, files: [{ name: 'message.txt' }] }, [chat])).toBe(false);
    expect(worthAnswering({ pasted: false, files: [{ name: 'message.txt' }] }, [log])).toBe(true);
    expect(worthAnswering({ pasted: false, files: [{ name: 'snippet', mimeType: 'text/plain' }] }, [chat])).toBe(false);
    expect(worthAnswering({ pasted: true, files: [{ name: 'message.txt' }] }, [chat])).toBe(true);
    // A long file is judged on its ends, as a long message is: the log at its end is found.
    const long = Buffer.concat([Buffer.alloc(3 * 1024 * 1024, 'x\n'), log]);
    expect(worthAnswering({ pasted: false, files: [{ name: 'message.txt' }] }, [long])).toBe(true);
  });
});

describe('invocations reach the command as they were made', () => {
  let deps: Awaited<ReturnType<typeof testDeps>>;
  let ctx: CommandContext;
  beforeAll(async () => {
    deps = await testDeps();
    ctx = { platform: 'slack', userId: 'U1', isAdmin: false, services: deps.services };
  });

  it('a typed line becomes the same invocation the registry runs', () => {
    expect(invocationOf('/gpu hosts add gpu9 ml@h:22 --key "./keys/gpu 9" --trust=SHA256:x')).toEqual({
      command: 'hosts',
      options: { _: ['add', 'gpu9', 'ml@h:22'], key: './keys/gpu 9', trust: 'SHA256:x' },
      text: 'add gpu9 ml@h:22 --key "./keys/gpu 9" --trust=SHA256:x',
    });
    expect(invocationOf('?!')).toBeNull();
  });

  it('the diagnosis names its rule on the outcome, in any language (no footer is read back)', async () => {
    const en = await deps.registry.dispatch(diagnoseInvocation(OOM, []), ctx);
    const zh = await deps.registry.dispatch(diagnoseInvocation(OOM, []), { ...ctx, locale: 'zh' });
    expect(en.rule).toBeDefined();
    expect(deps.services.rules.rules.map((r) => r.id)).toContain(en.rule);
    expect(zh.rule).toBe(en.rule);
    const help = await deps.registry.dispatch('/gpu help', ctx);
    expect(help.rule).toBeUndefined();
  });

  it('rule hits are counted by the id on the outcome, whatever the footer says', async () => {
    for (const locale of ['en', 'zh'] as const)
      await runCommand(
        { ...deps, config: { ...deps.config, locale: { default: locale, channels: {} } } },
        { platform: 'discord', userId: 'u', isAdmin: false, command: diagnoseInvocation(OOM, []) },
      );
    const rule = (await deps.registry.dispatch(diagnoseInvocation(OOM, []), ctx)).rule!;
    expect(await deps.metrics.registry.getSingleMetricAsString('gpu_doctor_rule_hits_total')).toContain(`gpu_doctor_rule_hits_total{rule="${rule}"} 2`);
  });

  it('the section of who holds the memory is found by its key, not by its heading in the asker’s language', async () => {
    for (const locale of ['en', 'zh'] as const) {
      const { reply } = await deps.registry.dispatch(diagnoseInvocation(OOM, []), { ...ctx, locale });
      const holder = reply.sections.find((s) => s.key === 'diag.heading.holder');
      expect(holder?.heading, locale).toBe(locale === 'zh' ? '谁占着内存' : 'Who holds the memory');
    }
  });

  it('a pasted text is diagnosed as text: no note that it is not UTF-8 when it never was bytes', async () => {
    // A lone surrogate (an emoji cut in half by a chat's message split) is text, not an unreadable byte.
    const cut = `${OOM}\nloss 🔥`.slice(0, -1);
    const { reply } = await deps.registry.dispatch(diagnoseInvocation(cut, []), ctx);
    expect(JSON.stringify(reply.sections)).not.toContain('not valid UTF-8');
    // Bytes that are not UTF-8, attached as a file, still are named.
    const file = Buffer.concat([Buffer.from(OOM), Buffer.from([0xff, 0xfe, 0x0a])]);
    const fromFile = await deps.registry.dispatch(diagnoseInvocation(null, [file]), ctx);
    expect(JSON.stringify(fromFile.reply.sections)).toContain('not valid UTF-8');
    expect(fromFile.reply.title).toBe((await deps.registry.dispatch(diagnoseInvocation(OOM, []), ctx)).reply.title);
  });

  it('a paste and its files are diagnosed together, and the audit row says their size, never their words', async () => {
    const at = OOM.indexOf('\n', OOM.length / 2);
    const [head, tail] = [OOM.slice(0, at), OOM.slice(at + 1)];
    const split = await runCommand(deps, { platform: 'slack', userId: 'U9', isAdmin: false, command: diagnoseInvocation(head, [Buffer.from(tail)]) });
    const whole = await deps.registry.dispatch(diagnoseInvocation(OOM, []), ctx);
    expect(split.reply.title).toBe(whole.reply.title);
    const row = deps.audit.recent(1)[0];
    expect(row.command).toBe(`diagnose (${head.length} chars, ${Buffer.byteLength(tail)} bytes of files)`);
  });
});
