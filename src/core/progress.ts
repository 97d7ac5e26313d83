// Interim replies of long work ("checking 24 hosts…", "12 of 24 answered", "reading train.log…"),
// paced here, the same for every adapter, so no platform gets an update storm: work done within
// QUIET_MS shows no progress at all (the quiet period starts when the pacer is made, which an adapter
// does before it downloads a message's files); after that interim replies change the message at most
// once per INTERVAL_MS, and only the newest one is shown (the ones in between are skipped). Pacing holds
// back interim replies only: the final answer goes out the moment the work is done (finish() waits for
// no interval, only for an edit already in flight, so the answer is not overwritten by it). An adapter
// only says how to show one interim reply (post, then edit the same message); a failed or hung edit is
// reported and skipped, never holding up the answer longer than EDIT_TIMEOUT_MS. (An edit given up on
// could still land after the answer, if the network held it that long.)
import { t, type Locale } from './i18n.js';
import type { Reply } from './reply.js';

/** Shows one interim reply (the first one posts, later ones edit the same message). */
export type ProgressSink = (reply: Reply) => Promise<void>;

/** What a command calls; resolves once this reply (or a later one replacing it) was shown or dropped. Never rejects. */
export type ProgressReporter = (reply: Reply) => Promise<void>;

/** A command that answers within this shows no progress (no message that flashes and is replaced at once). */
export const PROGRESS_QUIET_MS = 500;
/** The least time between two interim replies (the final answer is never held back by it). */
export const PROGRESS_INTERVAL_MS = 1000;
/** An edit that has not finished by then is given up on, so the final answer is never held up by it. */
export const PROGRESS_EDIT_TIMEOUT_MS = 10_000;

export interface ProgressPacerOptions {
  quietMs?: number;
  intervalMs?: number;
  editTimeoutMs?: number;
  /** A failed or timed-out edit (the final answer is delivered regardless). */
  onError?: (e: unknown) => void;
}

export class ProgressPacer {
  private readonly quietMs: number;
  private readonly intervalMs: number;
  private readonly editTimeoutMs: number;
  private readonly onError: (e: unknown) => void;
  private readonly startedAt = performance.now();
  /** The newest interim reply not shown yet. */
  private pending: Reply | null = null;
  /** Callers of update() waiting for the next delivery (or for finish). */
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;
  private lastShownAt = -Infinity;
  private finished = false;
  /** How many interim replies were handed to the sink. */
  shown = 0;

  constructor(
    private readonly sink: ProgressSink,
    options: ProgressPacerOptions = {},
  ) {
    this.quietMs = options.quietMs ?? PROGRESS_QUIET_MS;
    this.intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
    this.editTimeoutMs = options.editTimeoutMs ?? PROGRESS_EDIT_TIMEOUT_MS;
    this.onError = options.onError ?? (() => {});
  }

  readonly update: ProgressReporter = (reply) => {
    if (this.finished) return Promise.resolve();
    this.pending = reply;
    const shown = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.schedule();
    return shown;
  };

  private schedule(): void {
    if (this.timer || this.inFlight || this.finished || !this.pending) return;
    const notBefore = Math.max(this.startedAt + this.quietMs, this.lastShownAt + this.intervalMs);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.deliver();
      },
      Math.max(0, notBefore - performance.now()),
    );
  }

  private deliver(): void {
    const reply = this.pending;
    const waiters = this.waiters;
    this.pending = null;
    this.waiters = [];
    if (!reply || this.finished) return waiters.forEach((w) => w());
    this.lastShownAt = performance.now();
    this.shown++;
    this.inFlight = withTimeout(
      Promise.resolve().then(() => this.sink(reply)),
      this.editTimeoutMs,
    )
      .catch((e: unknown) => this.onError(e))
      .finally(() => {
        this.inFlight = null;
        waiters.forEach((w) => w());
        this.schedule();
      });
  }

  /**
   * No interim reply is shown after this (calling it again is harmless). Resolves as soon as the final
   * answer may replace the last one: at once, or when the edit in flight is done (or timed out), never
   * after a pacing interval. Never rejects.
   */
  async finish(): Promise<void> {
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = null;
    for (const w of this.waiters.splice(0)) w();
    if (this.inFlight) await this.inFlight;
  }
}

const size = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;

/** The interim reply while an adapter downloads a message's log files, before they are diagnosed. */
export function readingFilesReply(files: { name: string; size: number }[], loc?: Locale): Reply {
  const names = files.map((f) => (f.size > 0 ? `${f.name} (${size(f.size)})` : f.name));
  return { title: t(loc, 'progress.reading.title', { names: names.join(', ') }), severity: 'info', sections: [{ text: t(loc, 'progress.reading.text') }] };
}

function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`progress edit took over ${ms / 1000} s; skipped`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
