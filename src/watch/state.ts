// The leak watch's storage port: what the watch needs of wherever its state lives. Samples go in;
// samples, window summaries and the digest's findings come out; digests record what they reported and
// which slots ran. src/storage/sqlite/watch.ts (one process, data_dir) and src/storage/postgres/watch.ts
// (replicas sharing one database) implement it, and src/app.ts picks one; nothing in watch/ knows which.
// Where the two differ in kind (one process's last run against slots claimed among replicas, sampling
// every host against sampling the leased ones) the port says so with a value, not a backend name.
import type { SampleSource } from './chart-render.js';
import { packSamples, SamplePacker } from './chart-samples.js';
import type { ReportedState } from './digest.js';
import type { SeriesIndex } from './series.js';
import type { DetectorOptions, Finding, Sample } from './types.js';

/** A digest's findings and what was watched (hosts and processes seen in the last three sampling intervals). */
export interface FindingsResult {
  findings: Finding[];
  watched: { hosts: number; processes: number };
}

/** One process's record of its digests (SQLite): the last run of each schedule and what each reported. */
export interface DigestLog {
  lastRun(schedule: string): number | null;
  setLastRun(schedule: string, ms: number): void;
  reported(schedule: string): Map<string, ReportedState>;
  saveReported(schedule: string, update: Map<string, ReportedState>): void;
}

/** A digest slot's claim among replicas (Postgres): run (this replica posts it), or not (posted, skipped or held by a live replica). */
export interface DigestSlots {
  /** First start of a schedule: its latest slot counts as done (nothing was missed). */
  seed(schedule: string, slotMs: number): Promise<void>;
  /** True when this replica now holds the slot and must post it. */
  claim(schedule: string, slotMs: number): Promise<boolean>;
  /** Keeps the claim alive while the digest runs; false when another replica took it over (then do not post). */
  renew(schedule: string, slotMs: number): Promise<boolean>;
  done(schedule: string, slotMs: number, state: 'posted' | 'failed', note?: string): Promise<void>;
  /** Slots whose holder died (claim expired) with tries left: the oldest first. */
  abandoned(schedule: string): Promise<number[]>;
  reported(schedule: string): Promise<Map<string, ReportedState>>;
  saveReported(schedule: string, update: Map<string, ReportedState>): Promise<void>;
  /** How long a claim lives without renewal (ms). */
  readonly claimTtlMs: number;
}

/** How a schedule posts once per slot: this process's own log, or slots claimed among replicas. */
export type DigestRuns = { readonly log: DigestLog } | { readonly slots: DigestSlots };

/** Which replica samples which host: a lease per host, renewed while held. */
export interface SamplingLeases {
  /** How long a lease lives without renewal (ms). */
  readonly claimTtlMs: number;
  /** Takes or renews the lease of each host that is free, expired or already held here; returns those held. */
  leaseHosts(hosts: string[]): Promise<Set<string>>;
  /** Gives this process's leases back (a clean stop): another takes the hosts over at once. */
  releaseLeases(): Promise<void>;
}

/**
 * What the detector reads where the backend keeps window summaries (SQLite, in one thread): summaries
 * where it can, else the rows as samples, in time order.
 */
export interface SummaryReader {
  summariseInto(index: SeriesIndex, sinceMs: number, o: Pick<DetectorOptions, 'idleHours' | 'idleMinMiB' | 'idleMaxUtilPct'>): boolean;
  samplesSince(sinceMs: number): Iterable<Sample>;
  watched(sinceMs: number): { hosts: number; processes: number };
}

/** A backend's module a findings worker imports by URL to open the store's file (its own connection). */
export interface SummaryReaderModule {
  openSummaryReader(file: string): SummaryReader & { close(): void };
}

/**
 * Where the detector (src/watch/findings.ts, only there) reads a backend's samples: a file a worker
 * thread opens through the backend's reader module (SQLite), or sample batches read on this thread,
 * each a yield to the event loop (Postgres).
 */
export type FindingsInput = { readonly file: string; readonly reader: string } | { readonly batches: SampleReader };

/** What the detector reads from a backend that hands samples over in batches (Postgres): each in time order. */
export interface SampleReader {
  /** With `host`, that host's samples only. */
  eachSample(sinceMs: number, each: (s: Sample) => void, host?: string): Promise<void>;
  watched(sinceMs: number): Promise<{ hosts: number; processes: number }>;
}

/** A threshold alert's episode (src/watch/threshold-alerts.ts) that was posted: one GPU, one rule. */
export interface PostedEpisode {
  host: string;
  gpu: number;
  rule: string;
  /** When the condition began holding, as the process that posted it saw it. */
  sinceMs: number;
  postedMs: number;
}

/**
 * Which threshold episodes were posted: kept with the watch's state so a restart mid-episode, or another
 * replica taking the host over, does not post one again. A row lives until a reading shows its condition ended.
 */
export interface ThresholdEpisodes {
  postedEpisodes(): PostedEpisode[] | Promise<PostedEpisode[]>;
  /** Records the post unless one is recorded for this GPU and rule (then false: it was posted already, do not post). */
  markPosted(e: PostedEpisode): boolean | Promise<boolean>;
  clearEpisodes(ended: Pick<PostedEpisode, 'host' | 'gpu' | 'rule'>[]): void | Promise<void>;
}

/** The leak watch's state, wherever it lives. Answers are values or promises (SQLite answers at once). */
export interface WatchState {
  /** Writes one poll's samples, yielding to the event loop between chunks. */
  insertPaced(samples: Sample[]): Promise<void>;
  /** The newest sample's time (ms), or null with none: where a Prometheus history backfill starts. */
  latestTsMs(): number | null | Promise<number | null>;
  /** One host's samples since `sinceMs`, in time order (`/gpu watch`, charts). */
  samplesSince(sinceMs: number, host: string): Iterable<Sample> | Promise<Iterable<Sample>>;
  /** Where the detector reads this backend's samples (findingsOf in src/watch/findings.ts runs it). */
  findingsInput(): FindingsInput;
  /** Rows older than `retentionDays` become their per-hour max. */
  applyRetention(retentionDays: number): unknown;
  /** Where a chart child reads these hosts' samples since `sinceMs`. */
  chartSource(hosts: string[], sinceMs: number): Promise<SampleSource>;
  readonly digestRuns: DigestRuns;
  readonly thresholdEpisodes: ThresholdEpisodes;
  /** Sampling leases among replicas; absent: this process samples every host. */
  readonly leases?: SamplingLeases;
  close(): void;
}

/** A chart source of samples read here and sent to the child as columns (a backend the child cannot open itself). */
export async function packedChartSource(
  state: Pick<WatchState, 'samplesSince'> & Partial<Pick<SampleReader, 'eachSample'>>,
  hosts: string[],
  sinceMs: number,
): Promise<SampleSource> {
  // A backend read in batches hands each sample straight to the packer: no array of a week's objects
  // is held on the bot's thread between the read and the child.
  if (state.eachSample) {
    const packer = new SamplePacker();
    for (const h of new Set(hosts)) await state.eachSample(sinceMs, (s) => packer.add(s), h);
    return { packed: packer.finish() };
  }
  const samples: Sample[] = [];
  for (const h of new Set(hosts)) for (const s of await state.samplesSince(sinceMs, h)) samples.push(s);
  return { packed: await packSamples(samples) };
}
