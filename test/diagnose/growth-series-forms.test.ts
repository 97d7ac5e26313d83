// Principles (issue 23, growth): memory that climbs is judged by the series' own shape and the evidence of what
// holds it, not by words alone.
// 1. Trend, not band: a series that rises at every reading is a creep even when the rise is inside the noise band
//    (mmengine's memory: 3686 -> 3699 -> 3756); a jump from the first reading with the level held since is a warm-up.
// 2. A series in the reporter's own sentence ("2934M -- 4413M -- 4537M", "3G->12G->3G") is read like a column, and a
//    settled one (warm-up, sawtooth back to its level) contradicts words of growth: no leak is diagnosed.
// 3. Levers by evidence: a climb whose holder the paste does not show gets the experiment that finds it first
//    (memory_summary / snapshot; tracemalloc for host RAM); a kept loss shown (also quoted inside prose) gets the
//    release; DataLoader workers tied to the host climb in the report's own sentence get the workers.
// Real cases come from test/fixtures/untuned/growth8/ (tuned); every other text here is synthetic, written from the
// principle, and says so.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { classifyShape, extractHostSeries, extractMemorySeries, seriesSettled } from '../../src/diagnose/memory-series.js';

const pts = (v: number[]) => v.map((mib) => ({ mib }));
const MEASURE = /memory_summary|_record_memory_history|tracemalloc/;
const RELEASE = /\.item\(\)|detach/;

describe('trend, not band (memory-series.ts classifyShape)', () => {
  it.each([
    ['real: mmengine memory: 3686 -> 3699 -> 3756 (growth8 3602)', [3686, 3699, 3756]],
    ['synthetic: four readings, each a little higher', [5737, 5741, 5760, 5790]],
    ['synthetic: a slow creep in GiB-sized figures', [20480, 20500, 20560, 20610, 20700]],
  ])('%s: a creep', (_n, v) => {
    expect(classifyShape(pts(v))?.shape).toBe('growth');
  });

  it.each([
    ['synthetic: identical readings', [5737, 5737, 5737, 5737]],
    ['synthetic: noise both ways', [5737, 5741, 5736, 5740, 5738]],
    ['synthetic: a rise of a few MiB only', [5737, 5738, 5740]],
  ])('%s: flat', (_n, v) => {
    expect(classifyShape(pts(v))?.shape).toBe('flat');
  });

  it.each([
    ['real: 2934M -- 4413M -- 4433M -- 4537M -- 4537M -- 4537M (growth8 3623)', [2934, 4413, 4433, 4537, 4537, 4537]],
    ['synthetic: first step high, then level', [1000, 6000, 6010, 6010, 6010]],
    ['real: mmcv memory 4492 -> 4533 -> 4603 -> 4609, then level (growth8 3624)', [4492, 4533, 4603, 4603, 4609, 4609, 4609, 4609]],
  ])('%s: a warm-up, settled', (_n, v) => {
    const shape = classifyShape(pts(v))!;
    expect(shape.shape).toBe('warmup');
    expect(seriesSettled(shape)).toBe(true);
  });

  it('synthetic: a rise that keeps going after its first jump is still growth', () => {
    expect(classifyShape(pts([1000, 6000, 6500, 7000, 7600]))?.shape).toBe('growth');
  });

  it('synthetic: one step in the middle, level before and after, is a step and does not settle words of growth', () => {
    const shape = classifyShape(pts([2697, 2697, 2697, 2845, 2845, 2845]))!;
    expect(shape.shape).toBe('step');
    expect(seriesSettled(shape)).toBe(false);
  });
});

describe('a series in a sentence (memory-series.ts chainedSeries)', () => {
  it.each([
    [
      'real (growth8 3623)',
      'Then GPU memory consumption is **2934M -- 4413M -- 4433M -- 4537M -- 4537M -- 4537M** at the first six iterations.',
      [2934, 4413, 4433, 4537, 4537, 4537],
    ],
    [
      'real (growth8 3627)',
      'gradually increase to the maximum and then drop back to normal and then increase again (3G->12G->3G on my computer). memory',
      [3072, 12288, 3072],
    ],
    ['synthetic: arrows, GB', 'GPU memory: 10.2G → 11.5G → 13.1G → 14.8G before the crash', [10445, 11776, 13414, 15155]],
    ['synthetic: Chinese, MB', '显存 2000MB -> 3000MB -> 4000MB，然后报错', [2000, 3000, 4000]],
  ])('%s: read in order, in MiB', (_n, line, mib) => {
    expect(extractMemorySeries(line).map((p) => p.mib)).toEqual(mib);
  });

  it('synthetic: two figures are a comparison, not a series', () => {
    expect(extractMemorySeries('GPU memory went from 10G -> 20G')).toEqual([]);
  });

  it('synthetic: a chain on a line without a memory word is not read', () => {
    expect(extractMemorySeries('resolution 512M -> 640M -> 800M pixels')).toEqual([]);
  });

  it('real: a sawtooth that ends where it began settles (growth8 3627)', () => {
    const shape = classifyShape(extractMemorySeries('memory (3G->12G->3G on my computer)'))!;
    expect(seriesSettled(shape)).toBe(true);
  });
});

describe('a settled series or a sawtooth told in words is not a leak', () => {
  it.each(['3623', '3625', '3626', '3627'])('real growth8 %s: no growth diagnosis', async (n) => {
    const d = await firstOfCase('growth8', n);
    expect(d?.category).not.toBe('growing_memory_leak');
  });

  it.each([
    'synthetic: GPU memory keeps increasing during training: 3100M -> 5200M -> 5300M -> 5300M -> 5300M, then constant.',
    'synthetic: The GPU memory keeps growing to 20G and then drops back to 8G every epoch.',
    'synthetic: 训练时内存持续上涨，一个epoch结束后释放，如此循环往复',
  ])('%s', async (text) => {
    expect((await diagnosePaste(text))?.category).not.toBe('growing_memory_leak');
  });
});

describe('levers by evidence', () => {
  it('real growth8 3602 (mmengine creep, nothing kept shown): the measurement comes first', async () => {
    const d = await firstOfCase('growth8', '3602');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(MEASURE);
  });

  it('synthetic: a YOLO column climbing inside one epoch to an OOM with nothing kept shown: measurement first, no batch', async () => {
    const rows = [3.1, 4.9, 6.8, 8.7, 10.5].map((g) => `      0/99     ${g}G     0.0412     0.0213   0.00811        41       640`).join('\n');
    const d = await diagnosePaste(
      `${rows}\nRuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 11.00 GiB total capacity; 10.1 GiB already allocated)`,
    );
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(MEASURE);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  it('synthetic: a YOLO column that rises only from epoch to epoch: what validation leaves behind comes first', async () => {
    const rows = [3.1, 4.9, 6.8, 8.7, 10.5].map((g, i) => `      ${i}/99     ${g}G     0.0412     0.0213   0.00811        41       640`).join('\n');
    const d = await diagnosePaste(rows);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/validation/i);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  it('synthetic: the same climb with `total_loss += loss` in the paste: release the graph first', async () => {
    const rows = [3.1, 4.9, 6.8, 8.7, 10.5].map((g) => `      0/99     ${g}G     0.0412     0.0213   0.00811        41       640`).join('\n');
    const d = await diagnosePaste(`for imgs, targets in loader:\n    loss = model(imgs, targets)\n    total_loss += loss\n${rows}`);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(RELEASE);
  });

  it.each([
    ['real growth8 3621', ''],
    ['synthetic: English prose', 'The train loop does `epoch_loss += loss` and then logs it; GPU memory keeps growing until out of memory.'],
    ['synthetic: Chinese prose', '代码里 running_loss += loss，每个epoch显存都在涨，最后显存溢出'],
  ])('%s: a loss summed as a tensor, quoted inside a sentence, is the kept reference', async (name, text) => {
    const d = name.startsWith('real') ? await firstOfCase('growth8', '3621') : await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(RELEASE);
  });

  it('synthetic: `total_loss += loss.item()` in prose is not a kept reference', async () => {
    const d = await diagnosePaste('We already do total_loss += loss.item(), and GPU memory keeps increasing every iteration until OOM.');
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(MEASURE);
  });

  it.each([
    ['real growth8 3605', '3605'],
    ['real growth8 3606', '3606'],
    ['real growth8 3607 (zh)', '3607'],
    ['real growth8 3612', '3612'],
  ])('%s: host RAM tied to the DataLoader workers in the report: workers first', async (_n, id) => {
    const s = (await firstOfCase('growth8', id))!.fixes[0].summary;
    const workers = s.search(/workers/);
    const other = s.search(/\.item\(\)|tracemalloc/);
    expect(workers).toBeGreaterThan(-1);
    if (other > -1) expect(workers).toBeLessThan(other);
  });

  it.each([
    'synthetic: RAM keeps increasing every epoch when num_workers=8, with num_workers=0 it is flat.',
    'synthetic: 训练时内存一直在增长，是Dataloader多进程读取造成的',
  ])('%s: workers first', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0].summary).toMatch(/workers/);
  });

  it.each([
    ['real growth8 3604', '3604'],
    ['real growth8 3610', '3610'],
  ])('%s: host RAM climbing with no holder shown: tracemalloc before any cause', async (_n, id) => {
    const s = (await firstOfCase('growth8', id))!.fixes[0].summary;
    expect(s.search(/tracemalloc/)).toBeGreaterThan(-1);
    expect(s.search(/tracemalloc/)).toBeLessThan(s.search(/\.item\(\)/));
  });

  it('synthetic: host RAM climb with no holder, Chinese: the measurement first', async () => {
    const s = (await diagnosePaste('训练的时候内存一直升高，直到程序崩溃'))!.fixes[0].summary;
    expect(s).toMatch(/tracemalloc/);
  });
});

// Principle: a run that lasts more epochs when given more RAM needs memory that grows with the epochs (a climb, not a
// fixed size), so the answer is the one for growth: find what is kept, not more RAM.
describe('more RAM bought more epochs: host growth (levers/workers.ts)', () => {
  it('real growth8 3608 (zh): the measurement first', async () => {
    const d = (await firstOfCase('growth8', '3608'))!;
    expect(['growing_memory_leak', 'host_oom_killed']).toContain(d.category);
    expect(d.fixes[0].summary).toMatch(/tracemalloc/);
  });

  it.each([
    'synthetic: With 16GB RAM the training dies at epoch 20, with 32GB RAM at epoch 90. Killed',
    'synthetic: 8G内存只能跑5个epoch，换成64G内存能跑到40个epoch，然后进程被kill',
  ])('%s: growth, measured first', async (text) => {
    const d = (await diagnosePaste(text))!;
    expect(d.fixes[0].summary).toMatch(/tracemalloc/);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it('synthetic: more RAM but no more epochs is no growth reading', async () => {
    const d = await diagnosePaste('With 16GB RAM the training dies at epoch 20, with 32GB RAM at epoch 20 too. Killed');
    expect(d?.fixes[0]?.summary ?? '').not.toMatch(/rose as the run went on/);
  });
});

// Principle: growth told in words is a climb stated against the run's own clock (per epoch, each iteration, over
// hours, with the number of steps, 随着…增加而增加); the card's memory (GPU, VRAM, 显存, allocated) is the GPU rule's,
// RAM / 内存 the host's. All synthetic, written from the principle; each gets the measurement first, never the batch.
describe("growth told against the run's clock (gpu-memory-growth-reported, host-ram-growth-reported)", () => {
  it.each([
    'GPU memory usage goes up every epoch',
    'VRAM usage creeps up over time',
    'the allocated memory increases by 200MB each iteration',
    'memory consumption grows linearly with the number of iterations',
    'GPU memory slowly fills up over several hours and then OOM',
    'GPU memory grows by about 1GB per epoch',
    '显存随着迭代次数增加而增加',
  ])('GPU: %s', async (text) => {
    const d = (await diagnosePaste(text))!;
    expect(d.category).toBe('growing_memory_leak');
    expect(d.fixes[0].summary).toMatch(MEASURE);
    expect(d.fixes[0].changes.batch).toBeUndefined();
  });

  it.each(['RAM usage grows every epoch until the machine freezes', '内存占用越来越高', '内存随着epoch增加而增加，最后被kill'])('host: %s', async (text) => {
    const d = (await diagnosePaste(text))!;
    expect(['growing_memory_leak', 'host_oom_killed']).toContain(d.category);
    expect(d.fixes[0].summary).toMatch(/tracemalloc/);
  });
});

// Principle: a series is read wherever its readings repeat, whatever decorates them: tqdm's bar glyphs change from
// line to line but the line is the same reading; nvidia-smi's CSV query names its column in a header. Synthetic.
describe('series in a progress bar and in nvidia-smi CSV (memory-series.ts)', () => {
  const bar = (p: number) => '█'.repeat(p / 10) + ' '.repeat(10 - p / 10);
  const tqdm = [20, 40, 60, 80]
    .map((p, i) => `Epoch 0: ${p}%|${bar(p)}| ${p * 10}/1000 [00:1${i}<01:40, 5.4it/s, loss=0.3${i}, mem=${(6 + i * 1.5).toFixed(1)}G]`)
    .join('\n');
  const csv =
    'timestamp, memory.used [MiB]\n2024/05/01 10:00:01.000, 5000 MiB\n2024/05/01 10:10:01.000, 6200 MiB\n2024/05/01 10:20:01.000, 7400 MiB\n2024/05/01 10:30:01.000, 8600 MiB';

  it('synthetic: tqdm postfix mem=…G, one reading per line despite the bar', () => {
    expect(extractMemorySeries(tqdm).map((p) => p.mib)).toEqual([6144, 7680, 9216, 10752]);
  });

  it('synthetic: nvidia-smi --query-gpu CSV with a timestamp column', () => {
    expect(extractMemorySeries(csv).map((p) => p.mib)).toEqual([5000, 6200, 7400, 8600]);
  });

  it('synthetic: a flat CSV is no series of growth', () => {
    const flat = 'memory.used [MiB]\n5000 MiB\n5002 MiB\n5001 MiB\n5000 MiB';
    expect(classifyShape(extractMemorySeries(flat))?.shape).toBe('flat');
  });

  it.each([
    ['tqdm', tqdm],
    ['nvidia-smi CSV', csv],
  ])('synthetic: %s climbing: growth, measured first', async (_n, text) => {
    const d = (await diagnosePaste(text))!;
    expect(d.category).toBe('growing_memory_leak');
    expect(d.fixes[0].summary).toMatch(MEASURE);
  });
});

// Principle: whose memory a printed reading is comes from its own words: RSS, RAM, 内存, psutil's used memory are the
// host's, GPU / allocated / reserved / 显存 the card's. A host series that climbs is host growth (the host answer:
// tracemalloc, per-process RSS), never a GPU leak; one that does not climb contradicts words of host growth. Synthetic.
describe('host-RAM readings are a host series (memory-series.ts extractHostSeries)', () => {
  const rss = [5.1, 7.9, 10.8, 13.6].map((g, i) => `epoch ${i}: RSS ${g} GB`).join('\n');

  it('synthetic: RSS per epoch is read as the host series, not the GPU one', () => {
    expect(extractHostSeries(rss).map((p) => p.mib)).toEqual([5222, 8090, 11059, 13926]);
    expect(extractMemorySeries(rss)).toEqual([]);
  });

  it.each([
    ['RSS per epoch', rss],
    ['内存占用 per epoch (zh)', [10.2, 14.8, 19.5].map((g, i) => `epoch ${i + 1} 内存占用: ${g}G`).join('\n')],
    ['CPU memory per step', [3000, 4100, 5300, 6400].map((m, i) => `step ${i * 500} | cpu_mem ${m} MB`).join('\n')],
  ])('synthetic: %s climbing: host growth, tracemalloc first', async (_n, text) => {
    const d = (await diagnosePaste(text))!;
    expect(d.rule).toBe('host-ram-growth-reported');
    expect(d.fixes[0].summary).toMatch(/tracemalloc/);
  });

  it('synthetic: flat RSS readings contradict "the RAM keeps increasing": no host growth', async () => {
    const flat = ['epoch 0 RSS 5.1 GB', 'epoch 1 RSS 5.1 GB', 'epoch 2 RSS 5.2 GB', 'epoch 3 RSS 5.1 GB'].join('\n');
    const d = await diagnosePaste(`${flat}\nthe RAM keeps increasing during training`);
    expect(d?.rule).not.toBe('host-ram-growth-reported');
  });
});

// Principle: a tool's own host report is read in its fixed format: mmengine's "Memory information … current_process_memory:
// N MB" gives the process's figure (its available_memory falls as the process grows, so the first figure is not the
// reading). Synthetic lines in mmengine's format (growth8 3602 holds two real ones: 9795 -> 10965 MB).
describe("mmengine's host report (memory-series.ts extractHostSeries)", () => {
  const report = (used: number, proc: number) =>
    `05/10 20:33:39 - mmengine - INFO - Memory information available_memory: ${250000 - used} MB, used_memory: ${used} MB, memory_utilization: 32.7 %, available_swap_memory: 74 MB, used_swap_memory: 1974 MB, swap_memory_utilization: 96.4 %, current_process_memory: ${proc} MB`;
  it('synthetic: three reports: the process figure, in order', () => {
    const text = [report(81971, 9795), report(86981, 10965), report(92011, 12140)].join('\n');
    expect(extractHostSeries(text).map((p) => p.mib)).toEqual([9795, 10965, 12140]);
  });
  it('real figures of growth8 3602 (two reports) are not yet a series', () => {
    expect(extractHostSeries(report(81971, 9795) + '\n' + report(86981, 10965))).toEqual([]);
  });
});
