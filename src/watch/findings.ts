// Findings over a backend's recent samples: the detector runs here, over what the storage port yields
// (window summaries or rows from SQLite in a worker thread: findings-thread.ts; sample batches from
// Postgres on this thread). No backend runs it: each only says where to read (WatchState.findingsInput).
import { LeakDetector } from './detector.js';
import { findingsOffThread } from './findings-thread.js';
import type { FindingsResult, SampleReader, SummaryReader, WatchState } from './state.js';
import type { DetectorOptions, Sample } from './types.js';

export type { FindingsResult } from './state.js';

const HOUR = 3_600_000;

/** Findings over the store's recent samples (the detector's history window), computed here. */
export function findingsFromStore(store: SummaryReader, options: Partial<DetectorOptions> = {}, now = Date.now()): FindingsResult {
  const d = new LeakDetector(options);
  const since = now - d.options.maxHistoryHours * HOUR;
  // Per-window summaries kept by the store (~1/10 of the rows, no object per sample); raw rows otherwise.
  if (!store.summariseInto(d.index, since, d.options)) d.addAll(store.samplesSince(since));
  return { findings: d.findings(), watched: store.watched(now - 3 * d.options.sampleIntervalSec * 1000) };
}

/** The same findings over samples handed over in batches (each batch read is a yield to the event loop). */
export async function findingsFromSamples(reader: SampleReader, options: Partial<DetectorOptions> = {}, now = Date.now()): Promise<FindingsResult> {
  const d = new LeakDetector(options);
  await reader.eachSample(now - d.options.maxHistoryHours * HOUR, (s) => d.add(s));
  return { findings: d.findings(), watched: await reader.watched(now - 3 * d.options.sampleIntervalSec * 1000) };
}

/** The digest's findings over what a backend yields: off this thread where it names a file, else over its batches here. */
export function findingsOf(state: Pick<WatchState, 'findingsInput'>, options: Partial<DetectorOptions> = {}, now = Date.now()): Promise<FindingsResult> {
  const input = state.findingsInput();
  return 'batches' in input ? findingsFromSamples(input.batches, options, now) : findingsOffThread(input.file, input.reader, options, now);
}

/** Findings over samples recorded elsewhere (`gpu-doctor digest --samples`): every sample counts, whatever its age. */
export function recordedFindings(options: Partial<DetectorOptions> = {}): { add(sample: Sample): void; findings(): FindingsResult['findings'] } {
  const d = new LeakDetector(options);
  return { add: (sample) => d.add(sample), findings: () => d.findings() };
}
