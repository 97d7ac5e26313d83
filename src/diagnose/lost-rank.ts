// A rank that failed first, read from what the ranks that waited for it print. In a collective job the
// process that raises is rarely the one that broke: a peer that crashed closes its sockets ("Connection
// closed by peer"), a rank 0 that never created the communicator leaves the others timing out on its
// ncclUniqueId, a rank on another code path shows as a collective mismatch, and monitoredBarrier names
// the rank it waited for. The fix is on that rank (its own log, its own exception), never the network.
import RE2 from 're2';
import type { LogText } from './normalize.js';
import { t, type Locale } from '../core/i18n.js';

export type LostRank =
  /** Ranks waited on the c10d store for the ncclUniqueId rank `root` should publish when it reaches the collective. */
  | { kind: 'unique_id'; waiter?: string; root: string }
  /** A peer's socket closed: that process exited (crash, OOM kill) while this one still talked to it. */
  | { kind: 'peer_closed'; peer?: string }
  /** Ranks ran different collectives at the same step (TORCH_DISTRIBUTED_DEBUG=DETAIL). */
  | { kind: 'mismatch'; a: string; opA: string; b: string; opB: string }
  /** monitoredBarrier: the rank(s) that never reached it. */
  | { kind: 'barrier'; ranks: string }
  /** torchrun's elastic rendezvous was closed: another node's agent ended the job (its workers failed past their
   * restarts, or it was stopped), so this node could not (re)join. */
  | { kind: 'rendezvous_closed' };

// PyTorch's and Gloo's fixed messages; bounded, run in re2 on untrusted lines.
const UNIQUE_ID = new RE2(String.raw`\[(\d{1,6})\] is setting up NCCL communicator and retrieving ncclUniqueId from \[(\d{1,6})\] via c10d key-value store`);
const PEER_CLOSED = new RE2(String.raw`(?:Connection closed by peer|Connection reset by peer|Socket closed by peer)\s{0,3}(\[[\w.:\-]{1,80}\]:\d{1,5})?`);
const MISMATCH = new RE2(
  String.raw`Detected mismatch between collectives on ranks\. Rank (\d{1,6}) is running collective: CollectiveFingerPrint\([^)]{0,40}?OpType=(\w{1,40})[^\n]{0,400}?but Rank (\d{1,6}) is running collective: CollectiveFingerPrint\([^)]{0,40}?OpType=(\w{1,40})`,
);
const MONITORED = new RE2(String.raw`(?:waiting for send/recv from rank (\d{1,6})|Ranks? ([\d, ]{1,80}) failed to pass monitoredBarrier)`);
// torch.distributed.elastic's fixed class name (rendezvous/api.py) and dynamic_rendezvous's log line for it.
const RDZV_CLOSED = /\bRendezvousClosedError\b|detected that rendezvous was closed/;
const MAX_LINE = 800;

/** The first lost or diverged rank the log shows; undefined when none. */
export function readLostRank(log: LogText): LostRank | undefined {
  let closed: LostRank | undefined;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    // A closed rendezvous names no rank: kept only when no line names the peer that went first.
    if (!closed && RDZV_CLOSED.test(line)) closed = { kind: 'rendezvous_closed' };
    if (!/ncclUniqueId|by peer|mismatch between collectives|monitoredBarrier|send\/recv/.test(line)) continue;
    const u = UNIQUE_ID.exec(line);
    if (u) return { kind: 'unique_id', waiter: u[1], root: u[2] };
    const m = MISMATCH.exec(line);
    if (m) return { kind: 'mismatch', a: m[1], opA: m[2], b: m[3], opB: m[4] };
    const b = MONITORED.exec(line);
    if (b) return { kind: 'barrier', ranks: (b[1] ?? b[2]).trim().replace(/,\s*$/, '') };
    const p = PEER_CLOSED.exec(line);
    if (p) return { kind: 'peer_closed', peer: p[1] };
  }
  return closed;
}

/** The finding in words: which rank to look at and why the rank that raised is not it. */
export function lostRankWords(lost: LostRank | undefined, loc?: Locale): string {
  if (!lost) return t(loc, 'diag.lostRank.unknown');
  switch (lost.kind) {
    case 'unique_id':
      return t(loc, 'diag.lostRank.uniqueId', { waiter: lost.waiter ?? '?', root: lost.root });
    case 'peer_closed':
      return lost.peer ? t(loc, 'diag.lostRank.peerAt', { peer: lost.peer }) : t(loc, 'diag.lostRank.peer');
    case 'mismatch':
      return t(loc, 'diag.lostRank.mismatch', lost);
    case 'barrier':
      return t(loc, 'diag.lostRank.barrier', { ranks: lost.ranks });
    case 'rendezvous_closed':
      return t(loc, 'diag.lostRank.rendezvousClosed');
  }
}
