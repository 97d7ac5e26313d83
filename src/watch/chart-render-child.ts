// Child process entry (node, forked by chart-render.ts): computes and draws charts away from the bot.
// It reads the store's file through the reader module its source names (or the samples it is sent): it
// imports no backend itself. It runs the detector,
// builds the chart, checks its geometry and renders it with resvg. resvg is native code: a panic there
// aborts this process, never the bot, and the bot still has the text sent before drawing began.
// From the bundle dist/chart-render-child.mjs is the entry; from the sources chart-render-child-dev.mjs.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { svgToPng, PIXEL_RATIO } from './chart.js';
import { anyChartSize, anyChartSvg, anySpecProblem, type AnyChartSpec } from './chart-draw.js';
import { findingChartPlan, gpuChartPlan } from './chart-store.js';
import { svgProblem } from './chart-geometry.js';
import { packedSamplesSince } from './chart-samples.js';
import { CHILD_NICE, type ChartChildMessage, type ChartJob, type ChartReaderModule, type ChartSamples, type SampleSource } from './chart-render.js';

// Every thread at the parent's nice 19: it renices only the main thread, and the threads node started
// before that (V8's workers, libuv's pool) would keep the priority they began with.
if (process.platform === 'linux')
  for (const tid of readdirSync('/proc/self/task'))
    try {
      setPriority(Number(tid), CHILD_NICE);
    } catch {
      // A thread that ended meanwhile.
    }

const send = (m: ChartChildMessage) => new Promise<void>((resolve, reject) => process.send!(m, (e: Error | null) => (e ? reject(e) : resolve())));

/** Test-only hook (honoured only with NODE_ENV=test): GPU_DOCTOR_TEST_CHART_CRASH=abort aborts right before resvg draws, as its panic does. */
function testCrashHook(): void {
  if (process.env.NODE_ENV === 'test' && process.env.GPU_DOCTOR_TEST_CHART_CRASH === 'abort') process.abort();
}

/** The PNG of a spec, or why it was not drawn: the spec and the SVG are checked before resvg sees them. */
function draw(spec: AnyChartSpec): { png: Uint8Array } | { problem: string } {
  const specIssue = anySpecProblem(spec);
  if (specIssue) return { problem: specIssue };
  const svg = anyChartSvg(spec);
  const svgIssue = svgProblem(svg);
  if (svgIssue) return { problem: svgIssue };
  testCrashHook();
  return { png: svgToPng(svg, Math.round(anyChartSize(spec).width * PIXEL_RATIO)).png };
}

/** Reader modules by URL, imported once per child. */
const readers = new Map<string, Promise<ChartReaderModule>>();

async function openSource(source: SampleSource): Promise<ChartSamples> {
  if ('file' in source) {
    let reader = readers.get(source.reader);
    if (!reader) {
      reader = import(source.reader) as Promise<ChartReaderModule>;
      readers.set(source.reader, reader);
    }
    return (await reader).openChartSamples(source.file);
  }
  return { samplesSince: (sinceMs, host) => packedSamplesSince(source.packed, sinceMs, host), close: () => {} };
}

async function runJob(id: number, job: ChartJob): Promise<void> {
  const store = await openSource(job.source);
  try {
    if (job.kind === 'gpu') {
      const plan = gpuChartPlan(store, job.req, job.style, job.detector, job.known, job.now);
      // The text first: if drawing fails, or this process dies drawing, the bot answers with it.
      await send({ type: 'reply', id, reply: plan.reply });
      if (plan.chart) {
        const drawn = draw(plan.chart.spec);
        await send(
          'png' in drawn
            ? { type: 'png', id, index: 0, filename: plan.chart.filename, data: drawn.png }
            : { type: 'skipped', id, index: 0, problem: drawn.problem },
        );
      }
    } else {
      for (const [index, f] of job.findings.entries()) {
        const plan = findingChartPlan(store, f, job.style, job.now);
        if (!plan) {
          await send({ type: 'skipped', id, index, problem: 'no samples' });
          continue;
        }
        const drawn = draw(plan.spec);
        await send(
          'png' in drawn ? { type: 'png', id, index, filename: plan.filename, data: drawn.png } : { type: 'skipped', id, index, problem: drawn.problem },
        );
      }
    }
    await send({ type: 'done', id, rssBytes: process.memoryUsage().rss });
  } finally {
    store.close();
  }
}

// One job at a time (the parent sends the next after 'done'); this process serves jobs until the parent
// lets it go, so the charting libraries are loaded once, not per chart.
process.on('message', (m: { id: number; job: ChartJob }) => {
  runJob(m.id, m.job).catch((e: unknown) => send({ type: 'error', id: m.id, message: (e as Error)?.message ?? String(e) }).catch(() => process.exit(1)));
});
process.on('disconnect', () => process.exit(0));
