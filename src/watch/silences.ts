// `/gpu silence HOST [GPU] DURATION`: a host, or one GPU of it, gets no threshold alert and no early
// alert until the silence ends or is cancelled. The silences port (what the watch needs of wherever they
// are kept: src/storage/sqlite/silences.ts in data_dir, src/storage/postgres/silences.ts shared by
// replicas) and the service the command uses, with its rules: an admin may silence anything; anyone else
// only a host or GPU where a process of theirs (their unix user, through the owners' map) was sampled in
// the watch's last round; a silence is cancelled by an admin or by whoever set it.
import { isServerPlatform } from '../core/platform.js';
import type { OwnersService } from '../owners/directory.js';
import { isProcessSample, type Sample } from './types.js';

declare module '../core/services.js' {
  interface WatchService {
    /** `/gpu silence`: absent where the watch was started without a silences store. */
    silences?: Silences;
  }
}

export interface Silence {
  id: number;
  host: string;
  /** null: the whole host. */
  gpu: number | null;
  untilMs: number;
  createdMs: number;
  /** Who set it: their platform and user id (as the adapters name them). */
  byPlatform: string;
  byUser: string;
  cancelledMs: number | null;
  cancelledBy: string | null;
}

export type NewSilence = Pick<Silence, 'host' | 'gpu' | 'untilMs' | 'createdMs' | 'byPlatform' | 'byUser'>;

/** Where silences live. Answers are values (SQLite) or promises (Postgres). */
export interface SilenceStorage {
  /** Adds one unless `maxActive` are already in force (then null); ended ones older than 30 days go. */
  add(s: NewSilence, maxActive: number): Silence | null | Promise<Silence | null>;
  /** Silences in force at `nowMs` (not ended, not cancelled), soonest end first. */
  active(nowMs: number): Silence[] | Promise<Silence[]>;
  /** Cancels silence `id` if it is in force and `mayCancel` allows it: the silence as it was, or why not. */
  cancel(id: number, by: string, nowMs: number, mayCancel: (s: Silence) => boolean): SilenceCancel | Promise<SilenceCancel>;
  close?(): void | Promise<void>;
}

export type SilenceCancel = { ok: true; silence: Silence } | { ok: false; reason: 'none' | 'denied' };

/** At most this many silences in force at once: a flood of them is refused, not stored. */
export const MAX_ACTIVE_SILENCES = 500;
/** The longest silence (a week): a longer one is an alert rule to change, not a silence. */
export const MAX_SILENCE_MS = 7 * 24 * 3_600_000;

export interface Asker {
  platform: string;
  userId: string;
  isAdmin: boolean;
}

export type SilenceResult = { ok: true; silence: Silence } | { ok: false; reason: 'denied' | 'full' };

/** Who holds memory where, as the watch's last round saw it: host -> GPU -> unix users. */
export class Holders {
  private byHost = new Map<string, Map<number, Set<string>>>();

  /** One round's samples: each host it sampled is replaced by what the round saw there. */
  add(samples: Iterable<Sample>): void {
    const round = new Map<string, Map<number, Set<string>>>();
    for (const s of samples) {
      if (!isProcessSample(s)) continue;
      let h = round.get(s.host);
      if (!h) round.set(s.host, (h = new Map<number, Set<string>>()));
      let g = h.get(s.gpu);
      if (!g) h.set(s.gpu, (g = new Set()));
      g.add(s.user);
    }
    for (const [host, gpus] of round) this.byHost.set(host, gpus);
  }

  /** Unix users with a process on this host (on this GPU where one is named). */
  users(host: string, gpu: number | null): string[] {
    const h = this.byHost.get(host);
    if (!h) return [];
    const out = new Set<string>();
    for (const [g, users] of h) if (gpu === null || g === gpu) for (const u of users) out.add(u);
    return [...out];
  }
}

/** The silences as `/gpu silence` and the alerts use them. */
export class Silences {
  /** Silences in force as last read (refreshed before each round's checks, and after a change here). */
  private inForce: Silence[] = [];

  constructor(
    private store: SilenceStorage,
    private holders: Holders,
    private owners: () => Pick<OwnersService, 'lookup'> | undefined,
  ) {}

  /** Is this asker the owner of a process on this host (GPU), by the owners' map? */
  private owns(a: Asker, host: string, gpu: number | null): boolean {
    const owners = this.owners();
    if (!owners || !isServerPlatform(a.platform)) return false;
    const platform = a.platform;
    return this.holders.users(host, gpu).some((u) => owners.lookup(host, u)?.[platform] === a.userId);
  }

  async add(req: { host: string; gpu: number | null; durationMs: number }, a: Asker, nowMs = Date.now()): Promise<SilenceResult> {
    if (!a.isAdmin && !this.owns(a, req.host, req.gpu)) return { ok: false, reason: 'denied' };
    const silence = await this.store.add(
      { host: req.host, gpu: req.gpu, untilMs: nowMs + Math.min(req.durationMs, MAX_SILENCE_MS), createdMs: nowMs, byPlatform: a.platform, byUser: a.userId },
      MAX_ACTIVE_SILENCES,
    );
    if (!silence) return { ok: false, reason: 'full' };
    await this.refresh(nowMs);
    return { ok: true, silence };
  }

  async list(nowMs = Date.now()): Promise<Silence[]> {
    return this.refresh(nowMs);
  }

  async cancel(id: number, a: Asker, nowMs = Date.now()): Promise<SilenceCancel> {
    const r = await this.store.cancel(id, `${a.platform}:${a.userId}`, nowMs, (s) => a.isAdmin || (s.byPlatform === a.platform && s.byUser === a.userId));
    if (r.ok) await this.refresh(nowMs);
    return r;
  }

  /** Reads the silences in force (another replica's too). */
  async refresh(nowMs = Date.now()): Promise<Silence[]> {
    this.inForce = await this.store.active(nowMs);
    return this.inForce;
  }

  /** Whether an alert for this host and GPU is silenced at `nowMs` (as last read). */
  silenced(host: string, gpu: number | null, nowMs: number): boolean {
    return this.inForce.some((s) => s.host === host && (s.gpu === null || s.gpu === gpu) && s.untilMs > nowMs);
  }
}
