// The channel slots of one connection (at most 8 by default): chat requests are served before the
// sampler's; a channel the host refuses (sshd MaxSessions) lowers the cap for a while instead of
// dropping the connection the other requests are using.
import type { Priority } from './source.js';

interface ChannelWaiter {
  priority: Priority;
  /** Refused by the host once already: served before requests that have not had a go. */
  first: boolean;
  grant: () => void;
  fail: (e: Error) => void;
}

/** After a refusal, how long the lowered channel cap holds before it grows back one step per release. */
const REFUSAL_MEMORY_MS = 1000;

/** Channel slots of one connection; chat requests are served before the sampler's. */
export class ChannelSlots {
  private inUse = 0;
  private waiting: ChannelWaiter[] = [];
  private broken: Error | null = null;
  private lastRefusal = -Infinity;
  readonly max: number;
  constructor(public limit: number) {
    this.max = limit;
  }

  get busy(): number {
    return this.inUse;
  }

  /**
   * A release function once a channel is free; rejects with timeoutError() at the deadline. `first`:
   * ahead of everyone waiting (a request the host refused a channel keeps its turn).
   */
  acquire(priority: Priority, deadline: number, timeoutError: () => Error, first = false): Promise<() => void> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.inUse < this.limit && this.waiting.length === 0) {
      this.inUse++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const w: ChannelWaiter = {
        priority,
        first,
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser());
        },
        fail: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(
        () => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(timeoutError());
        },
        Math.max(0, deadline - performance.now()),
      );
      // Order: chat before sampler; within each, refused-once first; otherwise first come, first served.
      const rank = (x: { priority: Priority; first: boolean }) => (x.priority === 'interactive' ? 0 : 2) + (x.first ? 0 : 1);
      const at = this.waiting.findIndex((x) => rank(x) > rank(w));
      if (at >= 0) this.waiting.splice(at, 0, w);
      else this.waiting.push(w);
    });
  }

  /**
   * The host refused a channel with `open` of ours in use: ask for no more than that for a while.
   * Not for ever: sshd counts a session for a moment after its channel closed, so a refusal right
   * after a burst can understate what the host allows; the cap grows back one step per release.
   */
  lowerTo(open: number): void {
    this.limit = Math.max(1, Math.min(this.limit, open));
    this.lastRefusal = performance.now();
  }

  /** The connection is gone: every waiter fails now instead of at its deadline. */
  breakAll(e: Error): void {
    this.broken = e;
    for (const w of this.waiting.splice(0)) w.fail(e);
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      if (this.limit < this.max && performance.now() - this.lastRefusal > REFUSAL_MEMORY_MS) this.limit++;
      this.pump();
    };
  }

  private pump(): void {
    while (this.inUse < this.limit && this.waiting.length) {
      this.inUse++;
      this.waiting.shift()!.grant();
    }
  }
}
