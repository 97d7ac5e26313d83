// The core's pacing of interim replies (src/core/progress.ts) through the registry, with a command that
// reports progress the way status does: a quick command shows none, interim replies are coalesced
// (only the newest is shown), and an edit that hangs or fails never holds up or loses the answer.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/core/command.js';
import { ProgressPacer } from '../src/core/progress.js';
import { CommandRegistry } from '../src/core/registry.js';
import type { Reply } from '../src/core/reply.js';
import type { Services } from '../src/core/services.js';

const step = (n: number): Reply => ({ title: `step ${n}`, severity: 'info', sections: [] });

/** `/gpu work N MS`: reports steps 1..N, MS apart, then answers "done". */
const work = defineCommand({
  name: 'work',
  summary: 'reports progress (test)',
  usage: 'work STEPS MS',
  options: z.object({ _: z.tuple([z.coerce.number(), z.coerce.number()]) }).passthrough(),
  async run({ _: [steps, ms] }, ctx) {
    for (let i = 1; i <= steps; i++) {
      void ctx.progress?.(step(i));
      await new Promise((r) => setTimeout(r, ms));
    }
    return { title: 'done', severity: 'ok', sections: [] };
  },
});

const registry = new CommandRegistry([work]);
const ctx: CommandContext = { platform: 'console', userId: 'tester', isAdmin: true, services: {} as Services };

describe('progress pacing', () => {
  it('a command that answers within the quiet period shows no progress', async () => {
    const shown: string[] = [];
    const out = await registry.dispatch('/gpu work 3 10', ctx, { progress: new ProgressPacer(async (r) => void shown.push(r.title), { quietMs: 10_000 }) });
    expect(out.reply.title).toBe('done');
    expect(shown).toEqual([]);
  });

  it('shows only the newest interim reply of each interval, in order', async () => {
    const shown: string[] = [];
    // 20 steps 20 ms apart, an interval of 150 ms: far fewer edits than steps, each a later step.
    const out = await registry.dispatch('/gpu work 20 20', ctx, {
      progress: new ProgressPacer(async (r) => void shown.push(r.title), { quietMs: 0, intervalMs: 150 }),
    });
    expect(out.reply.title).toBe('done');
    expect(shown.length).toBeGreaterThanOrEqual(1);
    expect(shown.length).toBeLessThan(20);
    const numbers = shown.map((t) => Number(t.split(' ')[1]));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it('an edit that never finishes is given up on: the answer comes, and the failure is reported', async () => {
    const errors: string[] = [];
    const hung = new ProgressPacer(() => new Promise<void>(() => {}), {
      quietMs: 0,
      intervalMs: 50,
      editTimeoutMs: 300,
      onError: (e) => errors.push((e as Error).message),
    });
    const out = await registry.dispatch('/gpu work 2 20', ctx, { progress: hung });
    expect(out.reply.title).toBe('done');
    expect(errors).toEqual(['progress edit took over 0.3 s; skipped']);
  });

  it('an edit that fails is reported and the answer still comes; nothing is shown after it', async () => {
    const errors: string[] = [];
    let calls = 0;
    const failing = new ProgressPacer(
      () => {
        calls++;
        return Promise.reject(new Error('cant_update_message'));
      },
      { quietMs: 0, intervalMs: 30, onError: (e) => errors.push((e as Error).message) },
    );
    const out = await registry.dispatch('/gpu work 1 10', ctx, { progress: failing });
    expect(out.reply.title).toBe('done');
    expect(errors).toEqual(['cant_update_message']);
    await failing.update(step(9)); // after the answer: dropped
    expect(calls).toBe(1);
  });

  it('refusals finish the pacer too: an interim reply offered before the command is never shown after it', async () => {
    const shown: string[] = [];
    const pacer = new ProgressPacer(async (r) => void shown.push(r.title), { quietMs: 200 });
    void pacer.update(step(1)); // "reading the file…", before the command is known
    const out = await registry.dispatch('/gpu nosuchcommand', ctx, { progress: pacer });
    expect(out.outcome).toBe('unknown');
    await new Promise((r) => setTimeout(r, 400));
    expect(shown).toEqual([]);
  });
});
