// Principle (issue 23, environment): Docker Compose prints "<service>_N exited with code C" (v2: "<service>-N exited
// with code C") when a service's container stops, so a paste with that line ran in a container, whose /dev/shm is 64 MB
// unless raised: a DataLoader worker that exits there (not killed by the OOM killer) is /dev/shm first. Real: blind10/6228
// (SageMaker local mode, a read split); the rest are synthetic variants written from Compose's format, with near misses.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const WORKER = [
  'Traceback (most recent call last):',
  '  File "/usr/local/lib/python3.8/dist-packages/torch/utils/data/dataloader.py", line 1011, in _try_get_data',
  "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str)) from e",
  'RuntimeError: DataLoader worker (pid(s) 76) exited unexpectedly',
].join('\n');

describe("Docker Compose's exit line marks a container", () => {
  it('real blind10/6228: a DataLoader worker exits in a Compose-run training container: /dev/shm first', async () => {
    const d = await firstOfCase('blind10', '6228');
    expect(d?.category).toBe('shm_exhausted');
    expect(JSON.stringify(d?.fixes[0])).toMatch(/shm/i);
  });
  it.each([
    ['v1 name', `${WORKER}\ntrain_trainer_1 exited with code 1`],
    ['v2 name', `${WORKER}\nml-train-1 exited with code 1`],
  ])('synthetic (%s): the same worker exit beside the Compose exit line is /dev/shm', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('shm_exhausted');
  });
  it.each([
    ['a process, not a service', `${WORKER}\nProcess exited with code 1`],
    ['a sentence', `${WORKER}\nmy script exited with code 1 after that`],
  ])('synthetic near miss (%s): no container read, so not /dev/shm from this line', async (_n, paste) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).not.toBe('shm_exhausted');
  });
});
