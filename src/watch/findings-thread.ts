// The leak findings off the event loop, for a backend whose store a worker thread can open itself
// (SQLite): the worker (findings-worker.ts) opens the store's file through the backend's reader module
// and runs the detector (findings.ts) there, so a digest over a large fleet (seconds of work at 1000
// hosts) never holds up chat replies. The detector stays in watch/; the backend only says how to read.
import { Worker } from 'node:worker_threads';
import type { FindingsResult } from './state.js';
import type { DetectorOptions } from './types.js';

/** The worker: dist/findings-worker.mjs from the bundle, findings-worker-dev.mjs (tsx) from the sources. */
function workerThread(workerData: unknown): Worker {
  const entry = import.meta.url.endsWith('.ts') ? './findings-worker-dev.mjs' : './findings-worker.mjs';
  return new Worker(new URL(entry, import.meta.url), { workerData });
}

/** A digest that runs longer than this is stopped and reported as an error. */
export const FINDINGS_TIMEOUT_MS = 5 * 60_000;

/**
 * The findings computed in a worker thread that opens `file` through the module at URL `reader` (its
 * `openSummaryReader`), with its own connection. Runs from the TypeScript sources (tsx in the worker)
 * or from the bundle (dist/findings-worker.mjs).
 */
export function findingsOffThread(
  file: string,
  reader: string,
  options: Partial<DetectorOptions> = {},
  now = Date.now(),
  timeoutMs = FINDINGS_TIMEOUT_MS,
): Promise<FindingsResult> {
  return new Promise((resolve, reject) => {
    const worker = workerThread({ file, reader, options, now });
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
