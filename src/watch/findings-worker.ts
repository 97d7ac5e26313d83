// Worker thread entry: the leak findings over a store the backend's reader module opens here (its own
// connection to the store's file), so a digest over a large fleet never holds up chat replies.
import { parentPort, workerData } from 'node:worker_threads';
import { findingsFromStore } from './findings.js';
import type { SummaryReaderModule } from './state.js';
import type { DetectorOptions } from './types.js';

const { file, reader, options, now } = workerData as { file: string; reader: string; options: Partial<DetectorOptions>; now: number };
try {
  const module = (await import(reader)) as SummaryReaderModule;
  const store = module.openSummaryReader(file);
  try {
    parentPort!.postMessage({ ok: true, result: findingsFromStore(store, options, now) });
  } finally {
    store.close();
  }
} catch (e) {
  parentPort!.postMessage({ ok: false, error: (e as Error).message ?? String(e) });
}
