// Worker thread entry: computes the leak findings over a store file with its own SQLite connection, so
// a digest over a large fleet (seconds of work at 1000 hosts) never holds up chat replies.
import { parentPort, workerData } from 'node:worker_threads';
import { findingsFromStore } from '../../watch/findings.js';
import { WatchStore } from './watch.js';
import type { DetectorOptions } from '../../watch/types.js';

const { file, options, now } = workerData as { file: string; options: Partial<DetectorOptions>; now: number };
const store = new WatchStore(file);
try {
  parentPort!.postMessage({ ok: true, result: findingsFromStore(store, options, now) });
} catch (e) {
  parentPort!.postMessage({ ok: false, error: (e as Error).message ?? String(e) });
} finally {
  store.close();
}
