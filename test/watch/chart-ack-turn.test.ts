// A chart's child process is started only after the chat adapters' ack turn (issue 22, acks under load):
// Slack's and Discord's adapters start a command, give it one turn of the event loop (setImmediate) to
// answer in the ack, and ack otherwise. Starting the chart child (fork: synchronous) within the command's
// first microtasks held that ack, and every other request's. Here `/gpu chart` goes through the real
// command registry and leak watch over a SQLite store; after one setImmediate turn, as an adapter
// waits, no chart child exists yet; the chart is then drawn by one. Ordering only, no time is measured.
// The child runs at nice 19 so its rendering yields the CPU to acks, every thread of it, and in a session
// of its own: Linux schedules each session as one group (autogroup), and a nice-19 child inside the
// bot's session still made the bot's group a CPU hog, so under other load every ack waited for a CPU
// (bench:acks measured the bot runnable, not running, for most of its stalls). Linux only (/proc names
// the processes).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { parseConfig } from '../../src/config.js';
import type { CommandContext } from '../../src/core/command.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import type { Sample } from '../../src/watch/types.js';

const MIN = 60_000;

/** Chart children of this process (whatever thread forked them). */
function chartChildren(): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return (
          stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(process.pid) &&
          readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('chart-render-child')
        );
      } catch {
        return false;
      }
    });
}

/** A process's session id (/proc/PID/stat, field 6). */
function sessionOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3];
}

describe.runIf(existsSync('/proc/self/task'))('/gpu chart and the ack turn', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-chart-ack-'));
  const store = WatchStore.inDataDir(dir);
  const watch = new WatchRuntime(store, undefined, undefined, parseConfig({ data_dir: dir }).watch);
  afterAll(() => {
    watch.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts no chart child before the turn an adapter acks in; the chart is then drawn in one', async () => {
    const end = Date.now() - MIN;
    const samples: Sample[] = [];
    for (let k = 0; k <= 360; k += 5)
      samples.push({
        ts: end - (360 - k) * MIN,
        host: 'creep',
        gpu: 0,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: 20_000 + (k / 60) * 1024,
        utilizationPct: 90,
        pid: 4242,
        processStart: end - 7 * 3_600_000,
        user: 'alice',
        command: 'python train.py',
        processMiB: 20_000 + (k / 60) * 1024,
      });
    store.insert(samples);
    const ctx = { platform: 'console', userId: 'carol', isAdmin: false, channelId: 'console', services: { watch } } as unknown as CommandContext;
    expect(chartChildren()).toEqual([]);
    const answered = new CommandRegistry(allCommands()).dispatch('/gpu chart creep 0 6', ctx);
    // The adapters' ack turn (src/adapters/slack/app.ts, discord/app.ts: Promise.race with setImmediate).
    await new Promise((r) => setImmediate(r));
    const atAck = chartChildren();
    const { reply } = await answered;
    expect(atAck).toEqual([]);
    expect(reply.title).toBe('Chart creep · GPU 0 (last 6 h)');
    expect(reply.files?.[0].data.subarray(1, 4).toString('ascii')).toBe('PNG');
    // Drawn in a child (kept for the next chart), not in this process, at the lowest priority: under
    // load its rendering yields the CPU to the bot's acks (bench:acks).
    const children = chartChildren();
    expect(children).toHaveLength(1);
    const child = Number(children[0]);
    expect(getPriority(child)).toBe(19);
    const threads = readdirSync(`/proc/${child}/task`);
    expect(threads.map((tid) => [tid, getPriority(Number(tid))])).toEqual(threads.map((tid) => [tid, 19]));
    expect(sessionOf(child)).not.toBe(sessionOf(process.pid));
  }, 180_000);
});
