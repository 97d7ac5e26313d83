// The leak watch starts with what Prometheus already holds: at start, the Prometheus hosts' history
// since the store's last sample (at most the detector's window) is read with query_range and stored
// as the sampler would have stored it (SQLite in data_dir, or the replicas' Postgres), so a digest right
// after a (re)start sees the hours the bot was not sampling. SSH hosts have no such history: their gap
// stays a gap.
import type { HistoryFill, HistoryStore } from '../../hosts/source.js';
import type { Sample } from '../../readings/samples.js';

const HOUR = 3_600_000;

export interface HistorySource {
  history?(startMs: number, endMs: number): Promise<{ samples: Sample[]; warnings: string[] }>;
}

export async function backfillFromPrometheus(hosts: HistorySource, store: HistoryStore, now = Date.now(), windowHours = 72): Promise<HistoryFill> {
  if (!hosts.history) return { samples: 0, warnings: [], fromMs: null };
  const latest = await store.latestTsMs();
  const fromMs = Math.max(now - windowHours * HOUR, latest !== null ? latest + 1000 : 0);
  if (fromMs >= now) return { samples: 0, warnings: [], fromMs: null };
  const { samples, warnings } = await hosts.history(fromMs, now);
  await store.insertPaced(samples);
  return { samples: samples.length, warnings, fromMs };
}
