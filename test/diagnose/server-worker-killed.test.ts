// Principle (issue 23, host RAM; session 36 h1): gunicorn's arbiter reports each worker that died from a signal in fixed
// words ("Worker (pid:N) was sent SIGKILL! Perhaps out of memory?", "Worker with pid N was terminated due to signal 9").
// A SIGKILL the arbiter did not send is the kernel's OOM killer: host RAM, each worker holding its own copy of the app and
// its models. The arbiter SIGKILLs a worker itself after "WORKER TIMEOUT (pid:N)" and prints the same guess: no memory.
// Real cases (blind6, growth10) beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const KILLED = '[2025-06-23 10:58:53 +0000] [1] [ERROR] Worker (pid:8) was sent SIGKILL! Perhaps out of memory?';

describe("a server's worker SIGKILLed is a host-RAM kill", () => {
  it('real: PaddleOCR under gunicorn in Docker, workers SIGKILLed as each reloads five OCR models (blind6 3858)', async () => {
    const d = await firstOfCase('blind6', '3858');
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/fewer workers/);
  });
  it.each([['5007'], ['5010'], ['5012']])('real: growth10 %s', async (n) => {
    expect((await firstOfCase('growth10', n))?.category).toBe('host_oom_killed');
  });

  // Synthetic: both formats, a wrapped console line, and a Chinese report around it.
  it.each([
    [`server log\n${KILLED}\n[2025-06-23 10:58:53 +0000] [1864] [INFO] Booting worker with pid: 1864`],
    ['api pods\n[2024-05-01 10:00:00 +0000] [1] [WARNING] Worker with pid 42 was terminated due to signal 9'],
    ['ml | [07/06/25 11:56:26] ERROR    Worker (pid:9) was sent SIGKILL! Perhaps out of    \nml |                              memory?'],
    [`服务挂了\n用 gunicorn 起了 4 个 worker：\n${KILLED}`],
  ])('%j is a host kill with the worker fix (synthetic)', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(/--preload/);
  });
});

describe("the arbiter's own timeout kill is not memory", () => {
  it('real: mlflow CI, WORKER TIMEOUT then "was sent SIGKILL! Perhaps out of memory?" (growth10 5008)', async () => {
    expect(await firstOfCase('growth10', '5008')).toBeUndefined();
  });
  it('synthetic: the timeout first for the same pid', async () => {
    const text = `[2024-01-19 00:48:31 +0000] [7] [CRITICAL] WORKER TIMEOUT (pid:8)\n${KILLED}`;
    expect(await diagnosePaste(text)).toBeUndefined();
  });
  it('synthetic: another signal is no OOM kill', async () => {
    expect((await diagnosePaste('[2024-05-01 10:00:00 +0000] [1] [WARNING] Worker with pid 42 was terminated due to signal 15'))?.category).not.toBe(
      'host_oom_killed',
    );
  });
});
