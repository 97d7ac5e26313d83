// Where growth ends and an ordinary OOM begins (issue 23). An engineer calls it growth only with evidence that memory
// climbs at constant work per step: a climb told against the run's own measure ("with each iteration", "in 1000
// iterations"), an OOM after the run went on at its settings ("after a few iterations", "训练一段时间后"), a series
// that keeps rising. Not growth: a bare "keeps growing" beside an OOM's own figures, a yes/no "memory leak?", a batch
// size tried in the same sentence, a running peak that levels off (max_mem printed without its unit), a climb the report
// ties to the input's length, an OOM a sentence only avoids. Real cases from test/fixtures/untuned/growth9 (and two
// growth8 leftovers) beside synthetic variants written from each principle (marked "synthetic").
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseAll, diagnosePaste } from './corpus-case.js';
import { readToldFailure } from '../../src/diagnose/told-failure.js';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { toldRunBeforeFailure } from '../../src/diagnose/levers/progress.js';
import { readKeptReference } from '../../src/diagnose/levers/growth.js';
import { climbOverRun } from '../../src/diagnose/growth-oom.js';
import { classifyShape, extractMemorySeries, seriesSettled } from '../../src/diagnose/memory-series.js';
import { readWorkers } from '../../src/diagnose/levers/workers.js';
import { incidentOf } from '../../src/diagnose/incident/index.js';

const UNTUNED = resolve(import.meta.dirname, '../fixtures/untuned');
const real = (group: string, file: string) => diagnoseAll(resolve(UNTUNED, group, file));
const told = (text: string) => readToldFailure(new LogText(normalizeLog(text)));
const fixText = (d: { fixes: { summary: string }[] } | undefined) => d?.fixes[0]?.summary ?? '';
const MEASURE = /memory_summary|memory_allocated|_record_memory_history/;

// A plain PyTorch OOM at the end of a synthetic paste (figures of an ordinary step, nothing else).
const OOM =
  'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss.backward()\n' +
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 120.50 MiB is free. ' +
  'Of the allocated memory 22.10 GiB is allocated by PyTorch, and 310.00 MiB is reserved by PyTorch but unallocated.';

describe('a climb told against the run stays beside the OOM it ends in; a bare one does not', () => {
  it('real growth9 4000: "keeps using more memory with each iteration" after "a few iterations"', async () => {
    const ds = await real('growth9', '4000-growing_memory_leak.log');
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(true);
    expect(fixText(ds[0])).toMatch(MEASURE);
    expect(ds[0].fixes[0].changes.batch).toBeUndefined();
  });
  it('real growth9 4006: memory rose 14G -> 32G "in the diffusion 1000 iterations" beside the OOM title', async () => {
    const ds = await real('growth9', '4006-growing_memory_leak.log');
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(true);
  });
  it.each([
    'My GPU keeps using more memory with each iteration.',
    'GPU memory keeps increasing with every epoch.',
    'In the first 500 iterations the GPU memory rose from 6G to 11G, a memory leak.',
    'The GPU memory keeps growing as the iterations go on.',
  ])('synthetic: %s', async (words) => {
    const ds = await diagnoseAll('-', `${words}\n${OOM}`);
    expect(ds[0].category).toBe('cuda_oom');
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(true);
  });
  it.each(['My memory keeps growing, it is probably a leak?', 'Is there a memory leak somewhere?', 'Memory leak?', 'Could it be a GPU memory leak?'])(
    'synthetic, no measure of the run or only asked: %s',
    async (words) => {
      const ds = await diagnoseAll('-', `${words}\n${OOM}`);
      expect(ds[0].category).toBe('cuda_oom');
      expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(false);
    },
  );
  it('the told reading: a climb per iteration is over the run, a yes/no question about a leak tells nothing', () => {
    expect(told('My GPU keeps using more memory with each iteration').told).toMatchObject({ kind: 'gpu_growth', overRun: true });
    expect(told('GPU memory keeps increasing').told?.overRun).toBeUndefined();
    expect(told('Is there a memory leak somewhere?').told).toBeUndefined();
    // A wh-question presupposes the climb: it is told.
    expect(told('Why does the GPU memory keep increasing?').told?.kind).toBe('gpu_growth');
  });
});

describe('a run told to go on at its settings before the OOM: the step fit, the experiment comes before the batch', () => {
  it('real growth9 4003 (zh): "训练一段时间后就会溢出显存", batch 64', async () => {
    const [first] = await real('growth9', '4003-growing_memory_leak.log');
    expect(first.fixes[0].changes.batch).toBeUndefined();
    expect(fixText(first)).toMatch(MEASURE);
  });
  it('real growth9 4022: OOM "after several iterations" at batch_size=4', async () => {
    const [first] = await real('growth9', '4022-cuda_oom.log');
    expect(first.fixes[0].changes.batch).toBeUndefined();
    expect(fixText(first)).toMatch(/image size/);
  });
  it.each([
    ['after several iterations', 'Training starts fine but after several iterations I get CUDA out of memory.'],
    ['after 2000 steps', 'It trains and after 2000 steps the card runs out of memory.'],
    ['after training for a while', 'The job crashes after training for a while.'],
    ['训练一段时间后', '训练一段时间后显存溢出'],
    ['跑了几个step之后', '跑了几个step之后就爆显存了'],
  ])('synthetic: %s', async (phrase, words) => {
    expect(toldRunBeforeFailure(words)).toBe(phrase);
    const first = await diagnosePaste(`${words}\npython train.py --batch-size 8\n${OOM}`);
    expect(first?.category).toBe('cuda_oom');
    expect(first?.fixes[0].changes.batch).toBeUndefined();
    expect(fixText(first)).toMatch(MEASURE);
  });
  it.each([
    'If I try to use a batch size like 16 it starts training and after 10 iterations it throws a Cuda oom error.',
    'I get OOM after some time.',
    'It fails after the 3rd iteration sometimes.',
  ])('synthetic, no run told (a batch trial, a time, an ordinal): %s', (words) => {
    expect(toldRunBeforeFailure(words)).toBeUndefined();
  });
});

describe('an OOM a sentence only avoids is none; "CUDA memory errors" is one', () => {
  it('real growth8 3624: "maybe it is necessary to avoid potential OOM error" under a warm-up log: no diagnosis', async () => {
    expect(await real('growth8', '3624-unrelated.log')).toEqual([]);
  });
  it('real growth8 3628: the title "CUDA Memory Errors at first epoch at default batch size" tells the OOM', async () => {
    const [first] = await real('growth8', '3628-cuda_oom.log');
    expect(first.category).toBe('cuda_oom');
  });
  it('synthetic: an avoided OOM alone is denied, one told again on the line is not', () => {
    expect(told('I lowered the learning rate to avoid potential OOM errors.').denied.has(0)).toBe(true);
    expect(told('We set the budget preventing OOM errors. However, we are seeing OOM errors occur.').denied.has(0)).toBe(false);
  });
  it.each(['Getting CUDA memory errors at epoch 3', 'GPU memory error at the first epoch with batch 32'])('synthetic: %s', (words) => {
    expect(told(words).told?.kind).toBe('gpu_oom');
  });
  it('synthetic: "at first" is the past, "at first epoch" is a place in the run', () => {
    expect(told('At first I was getting CUDA out of memory').told).toBeUndefined();
    expect(told('CUDA out of memory at first epoch').told?.kind).toBe('gpu_oom');
  });
});

describe('a running peak printed without its unit is a series: one that levels off is no climb', () => {
  it('real growth9 4015 (zh): "显存会逐渐增加" but max_mem 2614 -> 2899 and flat, no error: no diagnosis', async () => {
    expect(await real('growth9', '4015-unrelated.log')).toEqual([]);
  });
  const line = (step: number, mib: number) => `eta: 0:20:00  epoch: 0  step: ${step}  loss: 1.2345  lr: 0.000100  max_mem: ${mib}`;
  it('synthetic: a unit-less max_mem that levels off is settled', () => {
    const series = extractMemorySeries([line(20, 3000), line(40, 4100), line(60, 4100), line(80, 4100), line(100, 4100)].join('\n'));
    expect(series.map((p) => p.mib)).toEqual([3000, 4100, 4100, 4100, 4100]);
    expect(seriesSettled(classifyShape(series)!)).toBe(true);
  });
  it('synthetic: a unit-less max_mem that keeps rising to the OOM is the climb', async () => {
    const steps = [4000, 8000, 12000, 16000, 20000, 23000].map((m, i) => line(20 * (i + 1), m)).join('\n');
    const ds = await diagnoseAll('-', `${steps}\n${OOM}`);
    expect(ds[0].category).toBe('growing_memory_leak');
  });
  it('synthetic: the key with M or MB still reads', () => {
    expect(extractMemorySeries(['max_mem: 2855M', 'max_mem: 2900MB', 'max_mem: 3000'].map((m) => `iter: 1  ${m}`).join('\n')).length).toBe(3);
  });
});

describe('memory told at points of the run in prose is a series ("after epoch N it uses X")', () => {
  it.each([
    ['After epoch 1 it uses 5 GB of GPU memory, after epoch 3 it uses 9 GB.', [5120, 9216]],
    ['At iteration 99 the model uses 3200MB of GPU memory, at iteration 219 it jumps to 7000MB', [3200, 7000]],
    ['第1个epoch显存3G，第5个epoch显存8G', [3072, 8192]],
  ])('synthetic: %s', (words, mib) => {
    expect(extractMemorySeries(words).map((p) => p.mib)).toEqual(mib);
  });
  it.each([
    ['one reading is no series', 'At epoch 5 the GPU memory is 10GB'],
    ['host RAM is the host series', 'After epoch 1 RAM is 5 GB, after epoch 2 RAM is 9 GB'],
    ['points that go back start no series', 'At step 200 it used 9 GB, at step 100 it used 5 GB'],
  ])('synthetic, %s', (_why, words) => {
    expect(extractMemorySeries(words)).toEqual([]);
  });
  it('synthetic: the climb told at epochs up to the OOM is the leak first, with the measurement that finds it', async () => {
    const ds = await diagnoseAll(
      '-',
      'After epoch 1 it uses 5 GB of GPU memory, after epoch 3 it uses 9 GB, after epoch 5 it uses 14 GB.\n' +
        'RuntimeError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 15.78 GiB total capacity; 14.10 GiB already allocated; 120.50 MiB free; 14.40 GiB reserved in total by PyTorch)',
    );
    expect(ds[0].category).toBe('growing_memory_leak');
    expect(fixText(ds[0])).toMatch(MEASURE);
  });
});

describe('printed readings: an experiment over sizes is no climb, allocated decides over reserved', () => {
  it.each([
    ['batch sizes', ['batch_size=8 GPU memory 5.1 GB', 'batch_size=16 GPU memory 9.3 GB', 'batch_size=32 GPU memory 17.8 GB']],
    ['resolutions', ['resolution 512: memory 4.2 GB', 'resolution 768: memory 7.9 GB', 'resolution 1024: memory 13.5 GB']],
    ['sequence lengths', ['seq_len=1024 allocated 6000 MB', 'seq_len=2048 allocated 9000 MB', 'seq_len=4096 allocated 15000 MB']],
    ['分辨率', ['分辨率 512 显存 4.2G', '分辨率 768 显存 7.9G', '分辨率 1024 显存 13.5G']],
  ])('synthetic: readings at rising %s make no series', (_what, lines) => {
    expect(extractMemorySeries(lines.join('\n'))).toEqual([]);
  });
  it('synthetic: readings at one batch size that rise are the climb', () => {
    const lines = [1, 2, 3, 4].map((i) => `step ${i * 100} bs 32 GPU memory ${4000 + i * 1500} MB`);
    expect(classifyShape(extractMemorySeries(lines.join('\n')))?.shape).toBe('growth');
  });
  it('synthetic: reserved climbing while allocated stays flat is the cache: the allocated series is read, flat', async () => {
    const lines = [1, 2, 3, 4, 5].map((i) => `step ${i * 100} reserved: ${4000 + i * 1500} MB\nstep ${i * 100} allocated: 3000 MB`);
    const series = extractMemorySeries(lines.join('\n'));
    expect(series.map((p) => p.mib)).toEqual([3000, 3000, 3000, 3000, 3000]);
    expect(classifyShape(series)?.shape).toBe('flat');
    const ds = await diagnoseAll('-', `${lines.join('\n')}\n${OOM}`);
    expect(ds.some((d) => d.category === 'growing_memory_leak')).toBe(false);
  });
});

describe('epochs said in words before the failure feed the incident', () => {
  const KILL = (words: string) => `Training gets killed\n${words}\nKilled\n`;
  it.each([
    'After 14 epochs the process is killed. I have 30GB RAM and num_workers=8.',
    'The process was killed at epoch 20, num_workers=8.',
    '在第20个epoch被kill了，num_workers=8',
  ])('synthetic: a host kill after many epochs is a climb, not the workers: %s', async (words) => {
    const first = await diagnosePaste(KILL(words));
    expect(first?.category).toBe('host_oom_killed');
    expect(fixText(first)).toMatch(/tracemalloc/);
    expect(first?.fixes[0].changes.workers).toBeUndefined();
  });
  it('synthetic: dying at the same epoch with more RAM is a fixed need there, no climb', () => {
    expect(readWorkers('With 16GB RAM the training is killed at epoch 20, with 32GB RAM at epoch 20 too.').hostGrowth).toBeUndefined();
    expect(readWorkers('With 16GB RAM it is killed at epoch 20, with 32GB RAM at epoch 90.').hostGrowth).toBeDefined();
  });
  it('synthetic: a kill at epoch 2 is no such evidence (the first validation can peak): the workers stay the lever', async () => {
    const first = await diagnosePaste(KILL('The process is killed at epoch 2. I have 30GB RAM and num_workers=8.'));
    expect(first?.fixes[0].changes.workers).toBe(4);
  });
  it.each(['The training runs fine for 10 epochs, then CUDA out of memory', 'It worked well for 30 epochs and then ran out of GPU memory'])(
    'synthetic: %s',
    async (words) => {
      const first = await diagnosePaste(`OOM\n${words}\n${OOM}`);
      expect(first?.category).toBe('cuda_oom');
      expect(first?.fixes[0].changes.batch).toBeUndefined();
      expect(fixText(first)).toMatch(/ran out only later/);
    },
  );
});

describe('host memory the workers "led to": the workers are the lever', () => {
  it('real growth9 4010: "Dataloader workers created more and more subprocess ... led to severe memory loss"', async () => {
    const [first] = await real('growth9', '4010-growing_memory_leak.log');
    expect(first.category).toBe('growing_memory_leak');
    expect(fixText(first)).toMatch(/workers/);
  });
  it.each([
    'The DataLoader workers led to host memory growing until the kill.',
    'num_workers=8 leads to RAM usage climbing every epoch.',
    'With num_workers 4 the memory grows more and more.',
  ])('synthetic: %s', (words) => {
    expect(readWorkers(words).growthWorkers).toBeDefined();
  });
  it('real growth9 4011: RAM (NOT on GPU) keeps decreasing in free -m, "caused by the data from Dataloader"', async () => {
    const [first] = await real('growth9', '4011-growing_memory_leak.log');
    expect(first.category).toBe('growing_memory_leak');
    expect(fixText(first)).toMatch(/^The report ties the climb to the DataLoader workers/);
  });
  it.each([
    ['RAM keeps increasing during training until the kill. I found it is caused by the DataLoader.', true],
    ['The memory (not on GPU) keeps growing every epoch. The leak comes from the dataloader.', true],
    // No host climb told: the loader named alone ties nothing.
    ['Training is slow. I think it is caused by the DataLoader.', false],
    // The card's climb is the growth rules' business.
    ['GPU memory keeps increasing during training, caused by the DataLoader.', false],
  ])('synthetic: %s', (words, tied) => {
    expect(readWorkers(words).growthWorkers !== undefined).toBe(tied);
  });
  it('synthetic: a GPU line is the card, not the workers', () => {
    expect(readWorkers('The DataLoader workers led to GPU memory growing').growthWorkers).toBeUndefined();
  });
});

describe('a climb the report ties to the input is the input, no evidence of growth', () => {
  it.each([
    '应该是音频长度的问题',
    'The memory goes up because of the longer sequences at the end of the epoch.',
    'I think the OOM is caused by large images in some batches.',
    'It is due to the sequence length of a few samples.',
  ])('synthetic: %s', (words) => {
    const kept = readKeptReference(words);
    expect(kept.series.riseWithInput).toBeDefined();
    expect(climbOverRun(incidentOf(kept, { series: { toldClimb: 'memory keeps increasing with each step' } }))).toBe(false);
  });
  it('synthetic: without it, a climb told over the run or a run told before the OOM is the evidence', () => {
    expect(climbOverRun(incidentOf({ series: { toldClimb: 'memory keeps increasing with each step' } }))).toBe(true);
    expect(climbOverRun(incidentOf({ progress: { runToldBeforeFailure: 'after a few iterations' } }))).toBe(true);
    expect(climbOverRun(incidentOf({}))).toBe(false);
  });
});
