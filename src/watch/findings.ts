// Findings over the store's recent samples, in this thread or in a worker thread.
import { Worker } from 'node:worker_threads';
import { LeakDetector } from './detector.js';
import type { WatchStore } from './store.js';
import type { DetectorOptions, Finding } from './types.js';

const HOUR = 3_600_000;

export interface FindingsResult {
  findings: Finding[];
  watched: { hosts: number; processes: number };
}

/** Findings over the store's recent samples (the detector's history window), computed here. */
export function findingsFromStore(store: WatchStore, options: Partial<DetectorOptions> = {}, now = Date.now()): FindingsResult {
  const d = new LeakDetector(options);
  const since = now - d.options.maxHistoryHours * HOUR;
  // Per-window summaries kept by the store (~1/10 of the rows, no object per sample); raw rows otherwise.
  if (!store.summariseInto(d.index, since, d.options)) d.addAll(store.samplesSince(since));
  return { findings: d.findings(), watched: store.watched(now - 3 * d.options.sampleIntervalSec * 1000) };
}

/** The worker: dist/findings-worker.mjs from the bundle, findings-worker-dev.mjs (tsx) from the sources. */
function workerThread(workerData: unknown): Worker {
  const entry = import.meta.url.endsWith('.ts') ? './findings-worker-dev.mjs' : './findings-worker.mjs';
  return new Worker(new URL(entry, import.meta.url), { workerData });
}

/** A digest that runs longer than this is stopped and reported as an error. */
export const FINDINGS_TIMEOUT_MS = 5 * 60_000;

/**
 * The same findings computed in a worker thread with its own connection to the store's file. Runs from
 * the TypeScript sources (tsx in the worker) or from the bundle (dist/findings-worker.mjs beside it).
 */
export function findingsOffThread(
  file: string,
  options: Partial<DetectorOptions> = {},
  now = Date.now(),
  timeoutMs = FINDINGS_TIMEOUT_MS,
): Promise<FindingsResult> {
  return new Promise((resolve, reject) => {
    const worker = workerThread({ file, options, now });
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
      void worker.terminate();
    };
    const timer = setTimeout(() => done(() => reject(new Error(`leak digest took longer than ${timeoutMs / 1000} s; stopped`))), timeoutMs);
    worker.once('message', (m: { ok: true; result: FindingsResult } | { ok: false; error: string }) =>
      done(() => (m.ok ? resolve(m.result) : reject(new Error(m.error)))),
    );
    worker.once('error', (e) => done(() => reject(e)));
    worker.once('exit', (code) => done(() => reject(new Error(`leak digest worker exited with code ${code}`))));
  });
}
