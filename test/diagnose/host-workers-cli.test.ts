// Through the CLI (`gpu-doctor diagnose --json`), issue 23's workers lever on the host side: fewer DataLoader
// workers is the first fix only when the evidence says the workers' own memory is the problem (a count above 1
// or a killed worker, nothing pointing elsewhere). Host RAM that rises over steps or epochs, a tensor kept across
// steps, a frame that collects the loader into a list, workers already lowered or at most one, a worker that exited
// in a container (its /dev/shm) and multiprocessing's semaphores in a full /dev/shm each get their own lever.
// Synthetic variants written from each principle beside real threads of the tuned groups (levers/workers.ts).
import { describe, expect, it } from 'vitest';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const lowersWorkers = (s: string) => /^(?:Lower|Reduce|Use fewer)[^.]{0,30}workers/.test(s);

const WORKER_KILLED = 'RuntimeError: DataLoader worker (pid 4123) is killed by signal: Killed.';
const WORKER_EXITED =
  'RuntimeError: DataLoader worker (pid(s) 311) exited unexpectedly with exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.';

describe('host RAM that rises over steps or epochs: what is kept is the lever, not the workers', () => {
  it.each([
    ['said in English, with 4 workers', 'the cpu memory keep going up during training and the process finally get killed\nnum_workers=4\nKilled'],
    ['per epoch, with 8 workers and a killed worker', `RAM usage increases by about 2 GB every epoch until the job dies\nnum_workers: 8\n${WORKER_KILLED}`],
    ['in Chinese', '训练的时候内存越来越大，最后被killed了\nnum_workers=8\nKilled'],
    ['not the GPU, told beside it', 'The memory usage (not GPU memory) increases gradually with each step.\nworkers=6\nKilled'],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/rose as the run went on/);
    expect(first(d)).toMatch(/\.item\(\)/);
    expect(lowersWorkers(first(d))).toBe(false);
  });

  it('the same kill with workers and no rise stated keeps fewer workers first', async () => {
    const d = await diagnoseText(`num_workers=8\n${WORKER_KILLED}`);
    expect(lowersWorkers(first(d))).toBe(true);
    expect(d?.fixes[0]?.changes.workers).toBeLessThan(8);
  });

  it('GPU memory that rises is not read as host RAM', async () => {
    const d = await diagnoseText('GPU memory keeps increasing during training\nnum_workers=8\nKilled');
    expect(first(d)).not.toMatch(/rose as the run went on/);
  });

  it('a loss tensor kept across steps in a host kill: the kept line is quoted and numbers are kept instead', async () => {
    const d = await diagnoseText('for x, y in loader:\n    loss = crit(model(x), y)\n    epoch_loss += loss\nnum_workers=4\nKilled');
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/`epoch_loss \+= loss`/);
    expect(first(d)).toMatch(/loss\.item\(\)/);
  });

  it('real thread (vision/150, RTMDet: CPU memory keeps going up, fewer workers tried): copy-on-read and .item(), not workers', async () => {
    const d = await firstOfCase('vision', '150');
    expect(first(d)).toMatch(/serialize_data=True/);
    expect(lowersWorkers(first(d))).toBe(false);
  });

  it('real thread (blind/1006, a replay buffer worker killed with 1 worker, tried): not workers again', async () => {
    expect(lowersWorkers(first(await firstOfCase('blind', '1006')))).toBe(false);
  });
});

describe("a frame that collects the DataLoader's batches into a list: every batch stays in RAM", () => {
  const frames = (prefix: string, code: string) =>
    [
      `${WORKER_KILLED}`,
      '',
      'The above exception was the direct cause of the following exception:',
      '',
      'Traceback (most recent call last):',
      `${prefix}  File "eval.py", line 88, in <module>`,
      `${prefix}    ${code}`,
      `${prefix}  File "eval.py", line 88, in <listcomp>`,
      `${prefix}    ${code}`,
      `${prefix}  File "/usr/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 634, in __next__`,
      `${prefix}    data = self._next_data()`,
    ].join('\n');
  it.each([
    ['a list comprehension', '', 'batches = [b for b in test_dl]'],
    ['under a torchrun rank prefix', '[rank0]:', 'cached = [(x.cuda(), y) for x, y in data_iter]'],
  ])('%s', async (_name, prefix, code) => {
    const d = await diagnoseText(frames(prefix, code));
    expect(first(d)).toMatch(/collects the DataLoader's batches into a list/);
    expect(first(d)).toContain(code);
    expect(lowersWorkers(first(d))).toBe(false);
  });

  it('a list comprehension whose next frame is not the DataLoader is not this', async () => {
    const text = frames('', 'xs = [f(v) for v in values]').replace('torch/utils/data/dataloader.py", line 634, in __next__', 'mylib/ops.py", line 12, in f');
    expect(first(await diagnoseText(text))).not.toMatch(/collects the DataLoader's batches/);
  });

  it('real thread (vision/192, val_loader=[x for x in val_loader]): iterate lazily', async () => {
    expect(first(await firstOfCase('vision', '192'))).toMatch(/RAM cache of the whole set/);
  });
});

describe('workers already lowered, or at most one: the experiment that decides, not fewer workers', () => {
  it.each([
    ['tried, in English', `I tried fewer workers but it still gets killed\nnum_workers=8\n${WORKER_KILLED}`, /already lowered/],
    ['tried, in Chinese', `num_workers设置为0，仍然被kill\n${WORKER_KILLED}`, /already lowered/],
    ['one worker stated', `num_workers=1\n${WORKER_KILLED}`, /one DataLoader worker or none/],
    ['set to 0 in prose', `The num-workers is set to 0, batch size is set to 1.\n${WORKER_KILLED}`, /one DataLoader worker or none/],
  ])('%s', async (_name, text, words) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(words);
    expect(first(d)).toMatch(/experiment that decides/);
    expect(d?.fixes.some((f) => typeof f.changes.workers === 'number')).toBe(false);
  });

  it('a maintainer suggesting fewer workers is not a report that they were tried', async () => {
    const d = await diagnoseText(`Try to reduce the workers_per_gpu in the config.\nworkers_per_gpu=4\n${WORKER_KILLED}`);
    expect(lowersWorkers(first(d))).toBe(true);
  });

  it('PyTorch\'s own hint ("Rerunning with num_workers=0") is not the run\'s setting: the stated 8 is lowered', async () => {
    const d = await diagnoseText(`python train.py --workers 8\n${WORKER_EXITED}`);
    expect(d?.facts.workers).toBe(8);
    expect(lowersWorkers(first(d))).toBe(true);
  });

  it('real thread (sealed/904, Megatron at 90K tokens, num-workers set to 0): not workers', async () => {
    const d = await firstOfCase('sealed', '904');
    expect(first(d)).toMatch(/one DataLoader worker or none/);
  });
});

describe("a DataLoader worker that exited in a container: the container's /dev/shm first", () => {
  it.each([
    ['docker run', `$ docker run --gpus all -it trainer:latest python train.py --workers 8\n${WORKER_EXITED}`],
    ['a Kubernetes pod', `kubectl logs train-7f9c -n ml\n${WORKER_EXITED}`],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/--shm-size|emptyDir/);
    expect(lowersWorkers(first(d))).toBe(false);
  });

  it.each([
    ['on a bare host', `$ python train.py --workers 8\n${WORKER_EXITED}`],
    ['SIGKILLed in a container (host RAM)', `$ docker run --gpus all -it trainer:latest python train.py --workers 8\n${WORKER_KILLED}\n${WORKER_EXITED}`],
  ])('not %s', async (_name, text) => {
    expect((await diagnoseText(text))?.category).toBe('host_oom_killed');
  });
});

describe("multiprocessing's semaphores in a full /dev/shm (SemLock, Errno 28): shm, not the disk", () => {
  const semlock = (errno: string) =>
    [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/multiprocessing/synchronize.py", line 57, in __init__',
      '    sl = self._semlock = _multiprocessing.SemLock(',
      errno,
    ].join('\n');
  it('a DataLoader queue that cannot get its lock', async () => {
    const d = await diagnoseText(semlock('OSError: [Errno 28] No space left on device'));
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/semaphore/);
    expect(first(d)).toMatch(/--shm-size|--ipc=host/);
  });

  it('Errno 28 writing a checkpoint is the disk, not /dev/shm', async () => {
    const d = await diagnoseText(
      '  File "train.py", line 301, in <module>\n    torch.save(model.state_dict(), path)\nOSError: [Errno 28] No space left on device',
    );
    expect(d?.category).not.toBe('shm_exhausted');
  });

  it('real thread (blind/1061, Megatron DataLoader SemLock): shm', async () => {
    const d = await firstOfCase('blind', '1061');
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/\/dev\/shm/);
  });
});
