// Fleet's storage port for `/gpu notify` subscriptions: what a subscription is and what a store of them
// does. src/storage/sqlite/subscriptions.ts (data_dir) and src/storage/postgres/subscriptions.ts
// (replicas sharing one database) implement it and src/app.ts picks one; src/fleet/notify.ts uses it and
// never knows which.

export type SubscriptionState = 'open' | 'notified' | 'expired' | 'cancelled';

export interface SubscriptionRow {
  id: number;
  platform: string;
  userId: string;
  sizeMiB: number;
  size: string;
  count: number;
  shared: boolean;
  createdMs: number;
  expiresMs: number;
  state: SubscriptionState;
  closedMs: number | null;
  note: string | null;
}

/**
 * Closed subscriptions kept per user (the newest; their notes say why a message could not be sent), in
 * every store: closing one deletes that user's older closed ones, so add/cancel cycles never grow the table
 * (the open ones are bounded by notify.max_per_user).
 */
export const KEEP_CLOSED_SUBSCRIPTIONS = 20;

/** A note on a closed subscription is cut to this many characters. */
export const SUBSCRIPTION_NOTE_CHARS = 500;

/** Where subscriptions live: SQLite in data_dir (answers at once) or Postgres shared by replicas (promises). */
export interface SubscriptionStorage {
  openSubscriptions(owner?: { platform: string; userId: string }): SubscriptionRow[] | Promise<SubscriptionRow[]>;
  addSubscription(s: Omit<SubscriptionRow, 'id' | 'state' | 'closedMs' | 'note'>): SubscriptionRow | Promise<SubscriptionRow>;
  /** Closes an open one (true: this call did); the user's closed ones beyond the newest KEEP_CLOSED_SUBSCRIPTIONS are deleted then. */
  closeSubscription(
    id: number,
    state: Exclude<SubscriptionState, 'open'>,
    nowMs: number,
    note?: string | null,
    owner?: { platform: string; userId: string },
  ): boolean | Promise<boolean>;
  noteSubscription(id: number, note: string): void | Promise<void>;
  /** One subscription, open or closed (null: none, or deleted). */
  subscription(id: number): SubscriptionRow | null | Promise<SubscriptionRow | null>;
  close?(): void | Promise<void>;
}
