// Owners' claims port (`/gpu whoami UNIXUSER`: a chat user says "alice on the hosts is me"; an admin
// approves it): what a claim is and what a store of them does. src/storage/sqlite/claims.ts (the registry's
// database under data_dir) and src/storage/postgres/claims.ts (shared by replicas) implement it; the owner
// directory (directory.ts) awaits either.
import type { ChatPlatform } from '../core/platform.js';

export type ClaimState = 'pending' | 'active' | 'rejected' | 'replaced' | 'withdrawn';
export type ClaimPlatform = ChatPlatform;

export interface ClaimRow {
  id: number;
  unixUser: string;
  /** null: every host; else the one host the claim is for (alice@gpu3). */
  host: string | null;
  platform: ClaimPlatform;
  userId: string;
  /** The name the claimant gave ("Alice Liddell"), shown where a platform mention cannot be. */
  name: string | null;
  state: ClaimState;
  createdMs: number;
  decidedMs: number | null;
  decidedBy: string | null;
}

type Maybe<T> = T | Promise<T>;

/** Where claims are kept: SQLite (answers at once) or Postgres shared by replicas (promises). */
export interface ClaimStorage {
  addPending(
    c: { unixUser: string; host: string | null; platform: ClaimPlatform; userId: string; name?: string | null },
    now?: number,
  ): Maybe<{ claim: ClaimRow; existed: boolean }>;
  pendingOf(platform: ClaimPlatform, userId: string): Maybe<ClaimRow[]>;
  pending(): Maybe<ClaimRow[]>;
  active(): Maybe<ClaimRow[]>;
  of(platform: ClaimPlatform, userId: string): Maybe<ClaimRow[]>;
  approve(id: number, by: string, now?: number): Maybe<{ claim: ClaimRow; replaced: ClaimRow | null } | null>;
  reject(id: number, by: string, now?: number): Maybe<ClaimRow | null>;
  close(): void;
}
