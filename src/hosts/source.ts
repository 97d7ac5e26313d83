// The port every host source implements: SSH hosts (the pool), the built-in localhost, the hosts of a
// `source: prometheus` group. The hosts service picks a host's source and asks it; it knows no
// source's details (connections, queries, commands).
import { english, type Message, type Text } from '../core/message.js';
import type { HostInfo, HostMemResult, HostStatusResult } from '../core/services.js';
import type { Sample } from '../readings/samples.js';
import type { HostEntry } from './registry.js';

/** Interactive requests (chat) go first; the leak-watch sampler's polls run in the background. */
export type Priority = 'interactive' | 'background';

/** Where a source's history goes: the leak watch's store (SQLite in data_dir, or the replicas' Postgres). */
export interface HistoryStore {
  /** The newest stored sample's time: SQLite answers at once, Postgres with a query. */
  latestTsMs(): number | null | Promise<number | null>;
  insertPaced(samples: Sample[]): Promise<void>;
}

export interface HistoryFill {
  /** Samples stored. */
  samples: number;
  warnings: string[];
  /** Start of the span read; null when nothing was missing. */
  fromMs: number | null;
}

export interface HostSource {
  /** What the source is called in log lines ("Prometheus history: ..."). */
  readonly label: string;
  /**
   * The hosts this source lists itself (a Prometheus group's `hosts:`), which win over the registry's;
   * absent for sources whose hosts are the registry's.
   */
  names?(): string[];
  /** GPUs, processes and host RAM of one host; never rejects (a failure is the result's one line). */
  status(entry: HostEntry, priority: Priority): Promise<HostStatusResult>;
  /** Host RAM of one host; never rejects. */
  mem(entry: HostEntry): Promise<HostMemResult>;
  /** The host as `hosts list` shows it (where it is read from). */
  info(entry: HostEntry): HostInfo;
  /** `hosts test`'s first step where the source has a connection to open; its host key's fingerprint. */
  probe?(entry: HostEntry): Promise<{ fingerprint: string }>;
  /** `hosts trust`: a source without host keys refuses with its own line. */
  trust(entry: HostEntry, expected?: string): Promise<{ fingerprint: string; message: Message; trusted: boolean }>;
  /** Lets go of what the source holds for a host being removed (a pooled connection). */
  forget?(entry: HostEntry): void;
  /**
   * Fills the leak watch's store with the history this source already holds since the store's last
   * sample (at most `windowHours`), before the first digest; absent where a source keeps no history
   * (an SSH host's gap stays a gap).
   */
  backfill?(store: HistoryStore, now: number, windowHours?: number): Promise<HistoryFill>;
  close(): Promise<void>;
}

/** A host's line in `hosts list`, read from `target`. */
export function hostInfo(e: HostEntry, target: string): HostInfo {
  return { name: e.name, target, origin: e.origin, hostKey: e.hostKey ?? null };
}

export function errorLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split('\n')[0].slice(0, 300);
}

/** A failed answer: its error's parts for the reply (`problems`), and in English, joined, as `error` (logs, JSON, the watch). */
export function hostFailure(
  name: string,
  problems: Text | Text[],
  elapsedMs?: number,
): { name: string; ok: false; elapsedMs?: number; error: string; problems: Text[] } {
  const parts = Array.isArray(problems) ? problems : [problems];
  return { name, ok: false, ...(elapsedMs === undefined ? {} : { elapsedMs }), error: parts.map(english).join('; '), problems: parts };
}

/** An ok answer's warnings: for the reply (`problems`) and in English, joined, as `warning`; nothing when there are none. */
export function hostWarnings(problems: readonly Text[]): { warning?: string; problems?: Text[] } {
  return problems.length ? { warning: problems.map(english).join('; '), problems: [...problems] } : {};
}
