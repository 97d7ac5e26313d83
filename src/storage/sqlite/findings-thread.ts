// The SQLite backend's findings off the event loop: a worker thread with its own connection to the
// store's file runs src/watch/findings.ts there, so a digest over a large fleet (seconds of work at 1000
// hosts) never holds up chat replies.
import { Worker } from 'node:worker_threads';
import type { FindingsResult } from '../../watch/findings.js';
import type { DetectorOptions } from '../../watch/types.js';
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
