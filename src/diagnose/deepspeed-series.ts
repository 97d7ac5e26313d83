// DeepSpeed's own memory reports as a series (memory-series.ts reads the other tools' columns). Two fixed forms:
// - its step timer (utils/timer.py, with memory_breakdown / wall_clock_breakdown): "0/2498, RunningAvgSamplesPerSec=3.06,
//   CurrSamplesPerSec=2.22, MemAllocated=0.02GB, MaxMemAllocated=0.02GB" (before 0.6: "0/40, SamplesPerSec=83.48,
//   MemAllocated=0.26GB, ..."), one line per step: MemAllocated is the series;
// - see_memory_usage (runtime/utils.py): a message line, then "MA 10.52 GB         Max_MA 14.1 GB         CA 15.2 GB ..."
//   (forks print MB, KB or B). The engine calls it at several points of one step ("Engine before forward", "... before
//   backward", "... before step"), where memory rises and falls inside the step, so only reports under the same message
//   make a series: the largest such group of three or more.
// Rank 1 and up are skipped (rank 0's series, or the only rank's). Bounded patterns, per line: linear.
import type { SeriesPoint } from './series-point.js';

const MAX_LINES = 50_000;
const MAX_POINTS = 2000;
const MIN_REPORTS = 3;
const TIMER = /(?:\bCurr|, )SamplesPerSec=[\d.e+-]{1,24}, MemAllocated=(\d{1,7}(?:\.\d{1,4})?)GB\b/;
const MA = /\bMA (\d{1,12}(?:\.\d{1,4})?) (GB|MB|KB|B)\s{1,40}Max_MA \d/;
const MESSAGE = /see_memory_usage\]\s{0,4}(.{1,120}?)\s*$/;
const OTHER_RANK = /\[rank[1-9]\d{0,5}\]|\[Rank [1-9]\d{0,5}\]/;
const TO_MIB: Record<string, number> = { GB: 1024, MB: 1, KB: 1 / 1024, B: 1 / 1048576 };

/** DeepSpeed's per-step MemAllocated, else its see_memory_usage reports under one message, in MiB; [] where neither. */
export function deepspeedSeries(text: string): SeriesPoint[] {
  if (!text.includes('MemAllocated=') && !text.includes('Max_MA ')) return [];
  const timer: SeriesPoint[] = [];
  const byMessage = new Map<string, SeriesPoint[]>();
  let message = '';
  let start = 0;
  for (let n = 0; n < MAX_LINES && start < text.length && timer.length < MAX_POINTS; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = end - start <= 2000 ? text.slice(start, end) : '';
    start = end + 1;
    if (!line || OTHER_RANK.test(line)) continue;
    const t = line.includes('MemAllocated=') ? TIMER.exec(line) : null;
    if (t) {
      timer.push({ mib: Math.round(Number(t[1]) * 1024) });
      continue;
    }
    const ma = line.includes('Max_MA ') ? MA.exec(line) : null;
    if (ma) {
      const group = byMessage.get(message) ?? [];
      if (group.length < MAX_POINTS) group.push({ mib: Math.round(Number(ma[1]) * TO_MIB[ma[2]]) });
      byMessage.set(message, group);
      continue;
    }
    const m = line.includes('see_memory_usage]') ? MESSAGE.exec(line) : null;
    // The message names the point of the step; its digits (a step count) do not make it another point.
    if (m && !m[1].startsWith('CPU Virtual Memory')) message = m[1].replace(/\d+/g, '#');
  }
  if (timer.length >= MIN_REPORTS) return timer;
  let best: SeriesPoint[] = [];
  for (const group of byMessage.values()) if (group.length > best.length) best = group;
  return best.length >= MIN_REPORTS ? best : [];
}
