// A memory series inside a paste (YOLO's per-epoch GPU_mem column, mmcv/mmengine's "memory:",
// detectron2's "max_mem:", torchvision's MetricLogger "max mem:", Megatron's "memory (MB) | allocated:", or
// a line the user's own code printed in the loop with a memory figure) and its shape. The shape decides the leak fix: memory that rises inside
// each epoch is references kept across iterations (.item(), detach()); memory that rises only between
// epochs is what validation leaves behind (empty_cache() after it, a fresh validation loader); a flat
// series ending in an OOM is capacity, not a leak. The same classifier names the shape of a creep the
// leak watch found (src/watch/detector.ts), so a digest and a paste get the same fix.
//
// Every pattern here is bounded and applied per line: linear in the paste's length.
import { smiCsvSeries } from './smi-csv-series.js';
import { deepspeedSeries } from './deepspeed-series.js';
import type { SeriesPoint } from './series-point.js';

export type { SeriesPoint } from './series-point.js';

export type MemoryShape =
  /** Level within noise. */
  | 'flat'
  /** The level keeps rising, with no drops back: a creep. */
  | 'growth'
  /** Peaks come back down, and the level they return to keeps rising (validation leaving blocks behind). */
  | 'sawtooth_rising'
  /** Peaks come back down to the same level: transient use (validation, variable shapes), not a leak. */
  | 'sawtooth'
  /** Rose at the start, level since: warm-up of the caching allocator. */
  | 'warmup'
  /** One jump, level before and after. */
  | 'step'
  | 'irregular';

export interface ShapeVerdict {
  shape: MemoryShape;
  /** Where a rising level rises: inside epochs (per iteration) or between them (at validation). */
  growsAt?: 'per_iteration' | 'between_epochs';
  firstMiB: number;
  lastMiB: number;
  minMiB: number;
  maxMiB: number;
  /** Rise of the floor (the level the series never goes below again), first to last. */
  riseMiB: number;
  points: number;
}

const MAX_POINTS = 2000;

// "  21/300      19.8G   1.468 ..." (YOLOv5/v8), "0/299     18.6 G" (YOLOv7 with a space).
const YOLO_PROGRESS = /^\s{0,12}(\d{1,5})\/\d{1,5}\s{1,12}(\d{1,4}(?:\.\d{1,3})?) ?G(?:\s|$)/;
// "Epoch [1][1550/23454] ... memory: 6814," (mmcv), "Epoch(train)  [1][ 300/14659] ... memory: 3686" (mmengine).
const MM_EPOCH = /\bEpoch(\((?:train|val|test)\))?\s{0,8}\[\s{0,6}(\d{1,5})\]\[\s{0,8}\d{1,8}\/\d{1,8}\]/;
// An integer MB followed by a separator ("memory: 6814,", "memory: 3686  grad_norm"): "memory: 10.2G" is prose, not the column.
const MM_MEMORY = /\bmemory: (\d{1,7})(?=[,\s]|$)/;
// "eta: 0:10:21  iter: 19  total_loss: 1.6 ... max_mem: 2855M" (detectron2); loggers built on it print the same key
// without the unit ("... lr: 0.000100  max_mem: 2899"): MB of torch.cuda.max_memory_allocated() either way.
const D2_MAX_MEM = /\bmax_mem: (\d{1,7})(?:M\b|MB\b|(?=\s|,|$))/;
// torchvision's reference MetricLogger (also DETR, DINO, MAE, DeiT...): "Epoch: [3]  [ 40/500]  eta: ...  max mem: 5432"
// (MB of torch.cuda.max_memory_allocated); "Test:  [...]" lines are evaluation's own.
const METRIC_LOGGER = /^\s{0,40}(?:Epoch: \[(\d{1,5})\])?\s{0,4}\[\s{0,8}\d{1,8}\/\d{1,8}\].{0,600}?\bmax mem: (\d{1,7})(?:\.\d{1,3})?(?:\s|$)/;
// Megatron-LM's report: "[Rank 0] (after 10 iterations) memory (MB) | allocated: 10240.5 | max allocated: ..."
const MEGATRON = /\(after (\d{1,9}) iterations\) memory \(MB\) \| allocated: (\d{1,7})(?:\.\d{1,6})?/;
// nvidia-smi's table, pasted once per look: the GPU's row ("|   0  NVIDIA A100-SXM4-80GB   On  | ...") then
// its memory ("| N/A 40C P0 250W / 400W |  20000MiB / 81920MiB | 99% Default |"). The first GPU's figure per
// table is one point; three tables or more make a series (one table is a reading, not a trend).
const SMI_GPU_ROW = /^\|\s{1,6}(\d{1,2})\s{1,6}\S/;
const SMI_MEMORY = /\|\s{0,40}(\d{1,7})MiB\s{0,3}\/\s{0,3}(\d{1,7})MiB\s{0,3}\|/;
const MIN_SMI_TABLES = 3;

/** The memory series a paste prints, in MiB, oldest first (one tool's format: the first that appears). */
export function extractMemorySeries(text: string): SeriesPoint[] {
  const yolo: SeriesPoint[] = [];
  const mm: SeriesPoint[] = [];
  const d2: SeriesPoint[] = [];
  const logger: SeriesPoint[] = [];
  const megatron: SeriesPoint[] = [];
  const smi: SeriesPoint[] = [];
  let smiGpu: number | undefined;
  let firstSmiGpu: number | undefined;
  let start = 0;
  while (start < text.length && yolo.length + mm.length + d2.length + logger.length + megatron.length + smi.length < 3 * MAX_POINTS) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    // Lines longer than a log line are skipped rather than scanned (a flattened paste is one line).
    const line = end - start <= 2000 ? text.slice(start, end) : '';
    start = end + 1;
    if (!line) continue;
    const y = YOLO_PROGRESS.exec(line);
    if (y) {
      yolo.push({ mib: Math.round(Number(y[2]) * 1024), epoch: Number(y[1]) });
      continue;
    }
    const mem = MM_MEMORY.exec(line);
    if (mem) {
      const e = MM_EPOCH.exec(line);
      // Validation lines print the validation loop's own peak: not the training series.
      if (e?.[1] && e[1] !== '(train)') continue;
      mm.push({ mib: Number(mem[1]), ...(e ? { epoch: Number(e[2]) } : {}) });
      continue;
    }
    const d = D2_MAX_MEM.exec(line);
    if (d) {
      d2.push({ mib: Number(d[1]) });
      continue;
    }
    const ml = line.includes('max mem: ') && !/^\s{0,40}Test:/.test(line) ? METRIC_LOGGER.exec(line) : null;
    if (ml) {
      logger.push({ mib: Number(ml[2]), ...(ml[1] !== undefined ? { epoch: Number(ml[1]) } : {}) });
      continue;
    }
    const mg = line.includes('memory (MB)') ? MEGATRON.exec(line) : null;
    // One line per rank: rank 0's series (or the only rank's).
    if (mg && !/\[Rank [1-9]\d{0,5}\]/.test(line)) {
      megatron.push({ mib: Number(mg[2]) });
      continue;
    }
    if (line.charCodeAt(0) !== 124 /* '|' */) continue;
    const row = SMI_GPU_ROW.exec(line);
    if (row) {
      smiGpu = Number(row[1]);
      firstSmiGpu ??= smiGpu;
      continue;
    }
    const used = line.includes('MiB') ? SMI_MEMORY.exec(line) : null;
    // The memory line right under the GPU's row, for the first GPU the paste shows.
    if (used && smiGpu !== undefined && smiGpu === firstSmiGpu) smi.push({ mib: Number(used[1]) });
    smiGpu = undefined;
  }
  const fromSmi = smi.length >= MIN_SMI_TABLES ? smi : [];
  const series = yolo.length ? yolo : mm.length ? mm : d2.length ? d2 : logger.length ? logger : megatron.length ? megatron : fromSmi;
  if (series.length) return series.slice(-MAX_POINTS);
  const deepspeed = deepspeedSeries(text);
  if (deepspeed.length) return deepspeed.slice(-MAX_POINTS);
  const csv = smiCsvSeries(text);
  if (csv.length >= MIN_SMI_TABLES) return csv.slice(-MAX_POINTS);
  const printed = printedSeries(text);
  if (printed.length) return printed.slice(-MAX_POINTS);
  const chained = chainedSeries(text);
  return (chained.length ? chained : proseSeries(text)).slice(-MAX_POINTS);
}

// Memory told at points of the run in the report's sentences: "after epoch 1 it uses 5 GB, after epoch 3 it uses 9 GB",
// "at iteration 99 the model uses 3200MB of GPU memory, at iteration 219 it jumps to 7000MB", "第1个epoch显存3G，第5个epoch
// 显存8G". Two or more readings at points that advance make a series (read only when no tool column, printed line or
// chain is in the paste). Host memory named with the figure is the host's series' business, not this one.
const RUN_POINT_FIGURE =
  /(?:\b(?:after|at|in|on|by)\s{1,3}(?:the\s{1,3})?(?:end\s{1,3}of\s{1,3})?(?:epoch|iteration|iter|step)s?\s{0,2}#?(\d{1,7})|第\s{0,2}(\d{1,7})\s{0,2}个?\s{0,2}(?:epoch|轮|step|iter|次迭代))[^\n\d]{0,60}?(\d{1,6}(?:\.\d{1,3})?)\s?(GiB|GB|G|MiB|MB|M)\b/gi;
const MAX_PROSE_LINES = 300;

function proseSeries(text: string): SeriesPoint[] {
  const points: SeriesPoint[] = [];
  let last = -1;
  let start = 0;
  for (let n = 0; n < MAX_PROSE_LINES && start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = end - start <= 2000 ? text.slice(start, end) : '';
    start = end + 1;
    if (!line || NOT_A_READING.test(line) || (HOST_WORD.test(line) && !GPU_WORD.test(line))) continue;
    for (const m of line.matchAll(RUN_POINT_FIGURE)) {
      const at = Number(m[1] ?? m[2]);
      // Points must advance through the run: a figure told for an earlier point starts no series.
      if (at <= last) return points.length >= 2 ? points : [];
      last = at;
      points.push({ mib: Math.round(Number(m[3]) * TO_MIB[m[4].toUpperCase()]) });
    }
  }
  return points.length >= 2 ? points : [];
}

// Readings the reporter chains in one sentence: "GPU memory consumption is 2934M -- 4413M -- 4433M -- 4537M",
// "3G->12G->3G", "10.2G → 11.5G → 13.1G". Three or more figures with a unit, joined by an arrow or a dash, on a line
// that names memory (显存/内存 too): the first such chain is the series. Read only when no tool column and no
// repeated printed line is in the paste.
const CHAIN =
  /\d{1,7}(?:\.\d{1,3})?\s?(?:GiB|GB|G|MiB|MB|M)\b(?:\s{0,3}(?:->|-->|→|--|—|=>|~>|➡)\s{0,3}\d{1,7}(?:\.\d{1,3})?\s?(?:GiB|GB|G|MiB|MB|M)\b){2,40}/i;
const CHAIN_WORD = /\b(?:mem(?:ory)?|vram|usage|consumption)\b|显存|内存/i;
const CHAIN_FIGURE = /(\d{1,7}(?:\.\d{1,3})?)\s?(GiB|GB|G|MiB|MB|M)\b/gi;

function chainedSeries(text: string): SeriesPoint[] {
  let start = 0;
  for (let n = 0; n < 50_000 && start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = end - start <= 2000 ? text.slice(start, end) : '';
    start = end + 1;
    if (!line || !CHAIN_WORD.test(line) || NOT_A_READING.test(line)) continue;
    const chain = CHAIN.exec(line);
    if (!chain) continue;
    return [...chain[0].matchAll(CHAIN_FIGURE)].map((m) => ({ mib: Math.round(Number(m[1]) * TO_MIB[m[2].toUpperCase()]) }));
  }
  return [];
}

// A series the user's own code printed: the same line again and again (a print in the loop) with a memory
// figure in it ("step 120 | allocated 5321.4 MB", "GPU memory: 9.8 GB", "torch.cuda.memory_allocated() 318986240").
// The line's template (its digits blanked) groups the readings; the largest group of three or more is the series.
// Only read when no tool's own column is in the paste. The failure's own message is not a reading.
const MEMORY_WORD = /\b(?:mem(?:ory)?|allocated|reserved|vram|gpu_mem|cuda_mem)\b|\bmemory_(?:allocated|reserved)\(|显存/i;
// Whose memory a printed line reads: the host's (RSS, RAM, 内存, psutil's used memory) unless it names the card.
const HOST_WORD = /\b(?:RSS|RAM|resident|(?:cpu|host|system)[ _]mem(?:ory)?|used_memory|current_process_memory)\b|内存/i;
const GPU_WORD = /\b(?:GPU|CUDA|VRAM|gpu_mem|cuda_mem|allocated|reserved)\b|显存|memory_(?:allocated|reserved)/i;
const FIGURE_WITH_UNIT = /(\d{1,7}(?:\.\d{1,6})?)\s?(GiB|GB|G|MiB|MB|Mb|M)\b/;
const BYTES_AFTER_CALL = /\bmemory_(?:allocated|reserved)\([^)\n]{0,20}\)\s{0,3}[:=]?\s{0,3}(\d{6,15})\b/;
const NOT_A_READING = /Tried to allocate|total capacity|out of memory|OutOfMemory|^\s{0,4}\|/i;
const TEMPLATE_DIGITS = /\d+(?:\.\d+)?/g;
const BAR_GLYPHS = /[\u2580-\u259f\u25a0\u25a1\u2500-\u257f#]+/g;
const SPACES = /\s+/g;
const MAX_TEMPLATES = 200;
const MIN_PRINTED = 3;
const TO_MIB: Record<string, number> = { GIB: 1024, GB: 1024, G: 1024, MIB: 1, MB: 1, M: 1 };

// mmengine's periodic host report: "Memory information available_memory: 173251 MB, used_memory: 81971 MB, …,
// current_process_memory: 9795 MB": the process's own figure is the reading (available memory falls as it rises).
const MMENGINE_PROCESS = /\bMemory information\b[^\n]{0,300}?\bcurrent_process_memory: (\d{1,9}) MB\b/g;

/** The host-RAM series a paste prints (a tool's host report, or RSS / RAM readings repeated in the loop), in MiB, oldest first. */
export function extractHostSeries(text: string): SeriesPoint[] {
  const mmengine = [...text.slice(0, 4_000_000).matchAll(MMENGINE_PROCESS)].map((m) => ({ mib: Number(m[1]) }));
  if (mmengine.length >= MIN_PRINTED) return mmengine.slice(-MAX_POINTS);
  return printedSeries(text, true).slice(-MAX_POINTS);
}

// A size the line sets beside its reading ("batch_size=16 ... 9.1 GB", "resolution 1024: 14 GB", "seq_len 4096"): readings
// whose size changes from line to line are an experiment over sizes, not a climb at constant work per step.
const SIZE_KNOB =
  /\b(?:batch[_ -]?size|bs|batch|resolution|res|img[_ -]?size|image[_ -]?size|imgsz|seq(?:uence)?[_ -]?len(?:gth)?|max[_ -]?len(?:gth)?|context[_ -]?len(?:gth)?|input[_ -]?size|crop[_ -]?size|num[_ -]?frames|n[_ -]?frames)\s{0,3}[=:]?\s{0,3}(\d{1,6}(?:\s?[x×*]\s?\d{1,6})?)\b|(?:分辨率|尺寸|长度)\s{0,3}[=:：]?\s{0,3}(\d{1,6}(?:\s?[x×*]\s?\d{1,6})?)/i;

interface PrintedGroup {
  points: SeriesPoint[];
  size?: string;
  /** The size the lines set changes between readings: an experiment over sizes. */
  sizeVaries?: true;
}

function printedSeries(text: string, host = false): SeriesPoint[] {
  const groups = new Map<string, PrintedGroup>();
  let start = 0;
  for (let n = 0; n < 50_000 && start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = end - start <= 400 ? text.slice(start, end) : '';
    start = end + 1;
    if (!line || NOT_A_READING.test(line)) continue;
    const hostLine = HOST_WORD.test(line) && !GPU_WORD.test(line);
    if (host ? !hostLine : hostLine || !MEMORY_WORD.test(line)) continue;
    const bytes = BYTES_AFTER_CALL.exec(line);
    const unit = bytes ? null : FIGURE_WITH_UNIT.exec(line);
    const mib = bytes ? Number(bytes[1]) / 2 ** 20 : unit ? Number(unit[1]) * TO_MIB[unit[2].toUpperCase()] : undefined;
    if (mib === undefined || !(mib > 0)) continue;
    // A progress bar's glyphs and padding change from line to line (tqdm's "45%|████▌     |"): not part of the template.
    const key = line.trim().replace(TEMPLATE_DIGITS, '#').replace(BAR_GLYPHS, '*').replace(SPACES, ' ');
    let group = groups.get(key);
    if (!group) {
      if (groups.size >= MAX_TEMPLATES) continue;
      group = { points: [] };
      groups.set(key, group);
    }
    const knob = SIZE_KNOB.exec(line);
    const size = knob ? (knob[1] ?? knob[2]) : undefined;
    if (group.points.length > 0 && size !== group.size) group.sizeVaries = true;
    group.size = size;
    if (group.points.length < MAX_POINTS) group.points.push({ mib: Math.round(mib) });
  }
  // The longest group of readings at one size; on a tie the allocated figure over the reserved one (the allocator's
  // cache can grow while what tensors hold stays flat: allocated says whether anything is kept).
  let best: [string, PrintedGroup] | undefined;
  for (const entry of groups) {
    if (entry[1].sizeVaries) continue;
    const n = entry[1].points.length;
    const m = best?.[1].points.length ?? 0;
    if (n > m || (best && n === m && ALLOCATED.test(entry[0]) && !ALLOCATED.test(best[0]) && RESERVED.test(best[0]))) best = entry;
  }
  return best && best[1].points.length >= MIN_PRINTED ? best[1].points : [];
}
const ALLOCATED = /allocated/i;
const RESERVED = /reserved|cached/i;

/** Noise band: YOLO prints 0.1 GiB steps; the allocator moves in 2-20 MiB blocks. */
const tolerance = (max: number) => Math.max(48, 0.02 * max);

export function classifyShape(points: readonly SeriesPoint[]): ShapeVerdict | undefined {
  const n = points.length;
  if (n < 2) return undefined;
  const v = points.map((p) => p.mib);
  let min = Infinity;
  let max = -Infinity;
  for (const x of v) {
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  const tol = tolerance(max);
  // Floor: the level the series never goes below again (suffix minimum).
  const floor = new Array<number>(n);
  let run = Infinity;
  for (let i = n - 1; i >= 0; i--) floor[i] = run = Math.min(run, v[i]);
  const rise = floor[n - 1] - floor[0];
  const base = { firstMiB: v[0], lastMiB: v[n - 1], minMiB: min, maxMiB: max, riseMiB: rise, points: n };
  // The noise band hides movement that goes both ways; a series that rises at every reading has none to hide,
  // so a creep smaller than the band (mmengine's 3686 -> 3699 -> 3756) is still a creep.
  const risesEveryReading = n >= 3 && v.every((x, i) => i === 0 || x > v[i - 1]) && v[n - 1] - v[0] >= Math.max(16, 0.005 * max);
  if (max - min <= tol && !risesEveryReading) return { shape: 'flat', ...base };

  // Drops: falls of more than the noise below the peak reached so far since the last drop.
  let drops = 0;
  let peak = v[0];
  for (let i = 1; i < n; i++) {
    if (v[i] < peak - tol) {
      drops++;
      peak = v[i]!;
    } else peak = Math.max(peak, v[i]);
  }
  // Steps of the floor, and how much of the rise the biggest one is.
  let steps = 0;
  let biggest = 0;
  let biggestAt = 0;
  for (let i = 1; i < n; i++) {
    const s = floor[i] - floor[i - 1];
    if (s > 0) {
      steps++;
      if (s > biggest) biggestAt = i;
      biggest = Math.max(biggest, s);
    }
  }
  if (rise <= tol && !risesEveryReading) return { shape: drops >= 2 ? 'sawtooth' : drops === 0 && v[n - 1] >= max - tol ? 'step' : 'irregular', ...base };

  // Still rising in the last third (a warm-up stops early).
  const lastThird = Math.floor((2 * n) / 3);
  const lateRise = floor[n - 1] - floor[Math.min(lastThird, n - 1)];
  const growsAt = whereItRises(points, floor);
  const withWhere = growsAt ? { growsAt } : {};
  // Two or three figures that only rise are all a short paste can show of a creep.
  const shortAndRising = n <= 3 && v.every((x, i) => i === 0 || x > v[i - 1]);
  if (shortAndRising || risesEveryReading || (steps >= 2 && biggest <= 0.7 * rise && (lateRise > tol || (n <= 4 && v[n - 1] >= max - tol))))
    return { shape: drops >= 2 ? 'sawtooth_rising' : 'growth', ...withWhere, ...base };
  // A jump from the very first reading with the level held since is the first step reaching its working set
  // (the allocator, cuDNN workspaces): a warm-up, since nothing was level before it.
  if (biggest > 0.7 * rise && biggestAt === 1 && lateRise <= tol && n >= 4) return { shape: 'warmup', ...base };
  if (biggest > 0.7 * rise) return { shape: 'step', ...withWhere, ...base };
  return { shape: 'warmup', ...base };
}

/**
 * A series that contradicts a report of growth: level within noise, a warm-up that stopped, peaks that come back to
 * the same level, or one that ends where it began (3G -> 12G -> 3G). Words saying the memory climbs are then the
 * reporter reading a peak, not a creep; one step (a validation batch) is left to the words.
 */
export function seriesSettled(verdict: ShapeVerdict): boolean {
  if (verdict.shape === 'flat' || verdict.shape === 'warmup' || verdict.shape === 'sawtooth') return true;
  return verdict.shape === 'irregular' && verdict.lastMiB <= verdict.firstMiB + tolerance(verdict.maxMiB);
}

/** With epochs printed: whether the floor rises inside epochs or across their boundaries. */
function whereItRises(points: readonly SeriesPoint[], floor: number[]): ShapeVerdict['growsAt'] {
  if (points.some((p) => p.epoch === undefined)) return undefined;
  let inside = 0;
  let across = 0;
  let epochs = 1;
  for (let i = 1; i < points.length; i++) {
    const s = floor[i] - floor[i - 1];
    if (points[i].epoch !== points[i - 1].epoch) {
      epochs++;
      across += s;
    } else inside += s;
  }
  if (epochs < 2) return inside > 0 ? 'per_iteration' : undefined;
  // One line per epoch cannot show where inside the epoch it rose: YOLO prints its running figure, so a
  // rise between two single-line epochs is a rise at the boundary only if lines inside epochs stay level.
  const multiLineEpochs = points.length > epochs;
  if (!multiLineEpochs) return 'between_epochs';
  return across >= 2 * inside ? 'between_epochs' : inside >= 2 * across ? 'per_iteration' : undefined;
}
