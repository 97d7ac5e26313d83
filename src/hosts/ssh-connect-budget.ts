// Connect slots: chat requests (interactive) and the leak-watch sampler (background) each have their
// own budget, so dead hosts in a poll never make a chat request wait for a slot; a chat request joining
// a sampler's connect that still waits for a slot promotes it to the chat budget.
import type { Priority } from './source.js';

/** Resolves true when `p` resolves before the deadline, false at the deadline. */
export function within(p: Promise<void>, deadline: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const timer = deadline === Infinity ? undefined : setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
    p.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** A place in line for a connect slot; `finish` gives the slot back (or leaves the line). */
export class ConnectTicket {
  heldAs: Priority | null = null;
  failed: Error | null = null;
  /** When a chat request first waited on it: a chat request's connect timeout counts from there. */
  interactiveSince: number | null;
  /** Resolves at the next change: granted, promoted or failed. */
  changed: Promise<void>;
  private finished = false;
  private wake!: () => void;
  constructor(
    private budget: ConnectBudget,
    public priority: Priority,
  ) {
    this.interactiveSince = priority === 'interactive' ? performance.now() : null;
    this.changed = this.nextChange();
  }
  private nextChange(): Promise<void> {
    return new Promise((r) => (this.wake = r));
  }
  private notify(): void {
    const wake = this.wake;
    this.changed = this.nextChange();
    wake();
  }
  take(as: Priority): void {
    this.heldAs = as;
    this.notify();
  }
  /** Read through a call: the field changes across an await, which narrowing would not see. */
  failure(): Error | null {
    return this.failed;
  }
  reject(e: Error): void {
    this.failed = e;
    this.notify();
  }
  /** A chat request now waits on this connect too: it moves to the chat budget. */
  promote(): void {
    if (this.priority === 'interactive' || this.heldAs || this.finished) return;
    this.priority = 'interactive';
    this.interactiveSince = performance.now();
    this.notify();
    this.budget.pump();
  }
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.budget.leave(this);
  }
}

/** Connect slots: `perPriority` for chat and as many for the sampler, so neither waits on the other. */
export class ConnectBudget {
  private used: Record<Priority, number> = { interactive: 0, background: 0 };
  private waiting: ConnectTicket[] = [];
  constructor(private perPriority: number) {}
  join(priority: Priority): ConnectTicket {
    const t = new ConnectTicket(this, priority);
    this.waiting.push(t);
    this.pump();
    return t;
  }
  pump(): void {
    for (let i = 0; i < this.waiting.length;) {
      const t = this.waiting[i];
      if (this.used[t.priority] < this.perPriority) {
        this.used[t.priority]++;
        this.waiting.splice(i, 1);
        t.take(t.priority);
      } else i++;
    }
  }
  /** The pool is closing: nobody waits for a slot any more. */
  shutdown(e: Error): void {
    for (const t of this.waiting.splice(0)) t.reject(e);
  }
  leave(t: ConnectTicket): void {
    if (t.heldAs) {
      this.used[t.heldAs]--;
      this.pump();
    } else {
      const i = this.waiting.indexOf(t);
      if (i >= 0) this.waiting.splice(i, 1);
    }
  }
}
