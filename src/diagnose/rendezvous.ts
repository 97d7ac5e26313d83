// Why a distributed job never got past its start: the rendezvous (torchrun's c10d/etcd rendezvous, the
// TCPStore every process group is built on, and the store-based barrier of init_process_group) waits for
// every rank to arrive; when its timeout fires, the ranks that raised are the ones that DID arrive. The
// figures PyTorch prints say who is missing: world_size against worker_count, "N/M clients joined", the
// endpoint a node could not reach. The answer is the rank that never came (crashed, still loading, another
// node that cannot reach MASTER_ADDR), or a store shared with another job; never the network of NCCL.
import RE2 from 're2';
import type { LogText } from './normalize.js';
import { t, type Locale } from '../core/i18n.js';

export type RendezvousStall =
  /** init_process_group's store barrier: `arrived` of `world` ranks incremented the key before `timeout`. */
  | { kind: 'barrier'; rank?: number; world: number; arrived: number; timeout: string }
  /** The TCPStore server (rank 0) waited for clients: DistStoreError "N/M clients joined" (its wait, where printed). */
  | { kind: 'store_clients'; joined: number; expected: number; seconds?: number }
  /** A node could not open the store at MASTER_ADDR:MASTER_PORT (or the rendezvous endpoint). */
  | { kind: 'connect'; endpoint?: string; after?: string }
  /** The store server could not listen: the port is taken (another job, a previous run still alive). */
  | { kind: 'listen'; port?: string }
  /** torchrun's rendezvous closed its window before every node joined (nnodes, rdzv endpoint or id differ). */
  | { kind: 'rendezvous' };

// Fixed PyTorch messages; bounded and run in re2 (untrusted lines).
const BARRIER = new RE2(
  String.raw`store based barrier (?:on|to initialize process group for) rank:? ?(\d{1,7}),? (?:for )?key: ?\S{1,80} \(world_size=(\d{1,7}), worker_count=(\d{1,7}), timeout=([\d:.]{1,20})\)`,
);
const BARRIER_TIMED_OUT = /Timed out initializing process group in store based barrier/;
// The count alone is the store's fixed message too (a title or a wrapped line keeps "16/32 clients joined" without its
// "Timed out after N seconds" head); PyTorch 2.2+ says "workers" where older releases said "clients".
const CLIENTS = new RE2(String.raw`(?:Timed out after (\d{1,9}) seconds waiting for (?:clients|workers)\. )?(\d{1,7})/(\d{1,7}) (?:clients|workers) joined`);
const CONNECT = new RE2(
  String.raw`(?:client socket has timed out after (\d{1,9}m?s) while trying to connect to (?:\(([\w.:\-\[\]]{1,100}, ?\d{1,5})\)|([\w.:\-\[\]]{1,120}?))[.,]?(?:\s|$)|connect\(\) timed out\. Original timeout was (\d{1,9} ?ms)|RendezvousConnectionError|DistNetworkError:[^\n]{0,40}client socket has failed to connect to (\[?[\w.:\-]{1,100}\]?:\d{1,5})|client socket has failed to connect to any network address of \(([\w.:\-\[\]]{1,100}, ?\d{1,5})\))`,
);
const LISTEN = new RE2(String.raw`server socket has failed to (?:listen on any local network address|bind to)`);
// The port in either wording: "bind to [::]:29500 (errno: 98 ..." or "... port: 29500, useIpv6: 0".
const PORT = new RE2(String.raw`(?:\bport:? ?|\]:|\d:)(\d{1,5})(?:,|\s{0,2}\(errno)`);
const PORT_IN_USE = new RE2(String.raw`\(errno: 98 - Address already in use\)|EADDRINUSE`);
const RENDEZVOUS = /RendezvousTimeoutError/;
// This machine's own address as the store endpoint: 127.x.x.x, localhost, ::1.
const LOOPBACK = /^\s{0,2}(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[?::1\]?)(?![\w.])/i;
const MAX_LINE = 600;

/** The first failure of the start-up rendezvous the log shows, with its figures; undefined when none. */
export function readRendezvous(log: LogText): RendezvousStall | undefined {
  let barrier: RendezvousStall | undefined;
  let other: RendezvousStall | undefined;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!/barrier|clients|workers joined|socket|connect|Rendezvous|EADDRINUSE|errno: 98/.test(line)) continue;
    const b = BARRIER.exec(line);
    // The last figures win for the barrier (the waiting lines repeat until the timeout line).
    if (b) {
      barrier = { kind: 'barrier', rank: Number(b[1]), world: Number(b[2]), arrived: Number(b[3]), timeout: b[4] };
      continue;
    }
    if (other) continue;
    const c = CLIENTS.exec(line);
    if (c) other = { kind: 'store_clients', seconds: c[1] === undefined ? undefined : Number(c[1]), joined: Number(c[2]), expected: Number(c[3]) };
    else if (LISTEN.test(line) || PORT_IN_USE.test(line)) other = { kind: 'listen', port: PORT.exec(line)?.[1] };
    else {
      const k = CONNECT.exec(line);
      if (k) other = { kind: 'connect', endpoint: k[2] ?? k[3] ?? k[5] ?? k[6], after: k[1] ?? k[4] };
      else if (RENDEZVOUS.test(line)) other = { kind: 'rendezvous' };
    }
  }
  if (barrier) return barrier;
  if (other) return other;
  // A timeout line without figures (wrapped, or quoted in prose): the barrier, figures unknown.
  for (let l = 0; l < log.lineCount; l++) if (BARRIER_TIMED_OUT.test(log.line(l).slice(0, MAX_LINE))) return { kind: 'rendezvous' };
  return undefined;
}

/** The finding in words: who never arrived, or why the store could not be reached, and what to do first. */
export function rendezvousWords(stall: RendezvousStall | undefined, loc?: Locale): string {
  if (!stall) return t(loc, 'diag.rendezvous.unknown');
  switch (stall.kind) {
    case 'barrier':
      // More arrivals than ranks: the key was incremented by ranks of another run (a reused file:// init
      // file, or two jobs on one MASTER_ADDR:MASTER_PORT), so the count can never equal world_size.
      if (stall.arrived > stall.world) return t(loc, 'diag.rendezvous.barrierShared', { ...stall, rank: stall.rank ?? '?' });
      return t(loc, 'diag.rendezvous.barrierMissing', { ...stall, rank: stall.rank ?? '?', missing: stall.world - stall.arrived });
    case 'store_clients':
      return t(loc, stall.seconds === undefined ? 'diag.rendezvous.storeClientsCount' : 'diag.rendezvous.storeClients', {
        ...stall,
        missing: stall.expected - stall.joined,
      });
    case 'connect':
      if (!stall.endpoint) return t(loc, 'diag.rendezvous.connect');
      // A loopback store is right for a one-node run: the address is not the fault, the process that hosts it is.
      return LOOPBACK.test(stall.endpoint)
        ? t(loc, 'diag.rendezvous.connectLocal', { endpoint: stall.endpoint })
        : t(loc, 'diag.rendezvous.connectTo', { endpoint: stall.endpoint });
    case 'listen':
      return t(loc, 'diag.rendezvous.listen', { port: stall.port ?? 'MASTER_PORT' });
    case 'rendezvous':
      return t(loc, 'diag.rendezvous.window');
  }
}
