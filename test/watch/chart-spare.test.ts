// Issue 22: a chart request does not fork its child process on the bot's thread (fork is synchronous and
// held every other user's ack 55-320 ms in bench:acks). The leak watch, once started, keeps one chart
// child ready; `/gpu chart` (the runtime's chartHost, as the command calls it) draws in that child, and
// no process is started between the request and its answer, nor for the next chart.
// Processes are read from Linux's /proc (this test process's children, every thread's).
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDeps } from '../adapters/helpers.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import type { Sample } from '../../src/watch/types.js';

const MIN = 60_000;

/** This process's child pids (the children of each of its threads). */
function children(): Set<number> {
  const pids = new Set<number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let list: string;
    try {
      list = readFileSync(`/proc/self/task/${tid}/children`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    for (const pid of list.split(' ').filter(Boolean)) pids.add(Number(pid));
  }
  return pids;
}

async function until<T>(what: () => T | undefined, timeoutMs: number, why: string): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(why);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const linux =
  process.platform === 'linux' &&
  (() => {
    try {
      readFileSync(`/proc/self/task/${process.pid}/children`);
      return true;
    } catch {
      return false;
    }
  })();

describe.runIf(linux)('a chart child kept ready', () => {
  let deps: Awaited<ReturnType<typeof testDeps>>;
  let watch: WatchRuntime;

  beforeAll(async () => {
    deps = await testDeps({ watch: true });
    watch = deps.services.watch as WatchRuntime;
    const end = Date.now() - MIN;
    const samples: Sample[] = [];
    for (let k = 0; k < 30; k++)
      samples.push({
        ts: end - (29 - k) * MIN,
        host: 'gpu1',
        gpu: 0,
        gpuTotalMiB: 81_559,
        gpuUsedMiB: 20_000 + k * 10,
        utilizationPct: 50,
        pid: 4242,
        processStart: end - 3_600_000,
        user: 'alice',
        command: 'python train.py',
        processMiB: 10_000 + k * 10,
      });
    await watch.store.insertPaced(samples);
  });
  afterAll(() => {
    watch?.stop();
    deps?.audit.close();
  });

  it('/gpu chart draws in the child started before it was asked, and no process is started while it is answered', async () => {
    const before = children();
    await watch.start();
    const ready = await until(
      () => {
        const now = [...children()].filter((p) => !before.has(p));
        return now.length ? new Set(now) : undefined;
      },
      30_000,
      'no chart child was started ahead of a request',
    );
    const atRequest = children();
    const reply = await watch.chartHost({ host: 'gpu1', gpu: 0, hours: 1 });
    const atAnswer = children();
    expect(reply.files?.[0]?.contentType).toBe('image/png');
    // The answer came from a process that existed before the request; none was started for it.
    expect([...atAnswer].filter((p) => !atRequest.has(p))).toEqual([]);
    expect([...ready].every((p) => atAnswer.has(p))).toBe(true);
    // The child stays ready after the answer: the next chart does not fork either.
    const again = await watch.chartHost({ host: 'gpu1', gpu: 0, hours: 2 });
    expect(again.files?.[0]?.contentType).toBe('image/png');
    expect([...children()].filter((p) => !atRequest.has(p))).toEqual([]);
  }, 90_000);
});
