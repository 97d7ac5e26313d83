// One persistent connection per host, on node-ssh (NodeSSH.connect, execCommand with per-stream
// callbacks, forwardOut for ProxyJump hops; its ssh2 `connection` for events and channel close):
// TCP_NODELAY, keepalives, at most 8 channels each, connect and exec timeouts, strict host key
// checking, no passwords. Fairness under load:
// - connect slots come from two budgets, chat (interactive) and the sampler (background), so dead
//   hosts in a poll never make a chat request wait; a chat request joining a sampler's connect that
//   still waits for a slot promotes it;
// - the exec timeout covers the wait for a free channel, and chat requests get channels first;
// - a channel the host refuses (sshd MaxSessions) lowers that connection's channel cap and the
//   request waits again; it never drops the connection the other requests are using;
// - every channel the bot gives up on is closed, even one that opens after the bot gave up;
// - stdout and stderr are capped separately; at a cap the channel is closed.
// Nothing thrown inside ssh2's callbacks escapes: every failure is an SshError for that request.
// Its parts: ssh-connect-budget.ts (connect slots), ssh-channel-slots.ts (channels per connection),
// ssh-host-key.ts (host-key verification), ssh-auth.ts (keys and agent offered), ssh-exec.ts (one
// command on a channel), ssh-target.ts (targets and errors).
import { NodeSSH } from 'node-ssh';
import type { Client } from 'ssh2';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { fingerprintOf, type KnownHosts } from './known-hosts.js';
import type { Priority } from './source.js';
import { connectConfig } from './ssh-auth.js';
import { ChannelSlots } from './ssh-channel-slots.js';
import { ConnectBudget, within, type ConnectTicket } from './ssh-connect-budget.js';
import { runOn, type Conn, type ExecResult } from './ssh-exec.js';
import { verifyHostKey } from './ssh-host-key.js';
import { addr, describe, SshError, type SshTarget } from './ssh-target.js';

// What callers import from the pool, as before its parts moved to files of their own.
export type { Priority } from './source.js';
export { DEFAULT_MAX_STDERR_BYTES, DEFAULT_MAX_STDOUT_BYTES, type ExecResult } from './ssh-exec.js';
export { SshError, type SshTarget } from './ssh-target.js';

export interface PoolOptions {
  connectTimeoutMs: number;
  execTimeoutMs: number;
  /** Concurrent connects per budget (chat and sampler each have this many). */
  maxConcurrentConnects: number;
  knownHosts?: KnownHosts;
  /** Tried when a target has no identity file of its own. */
  defaultIdentityFile?: string;
  agent?: string;
  maxChannelsPerConnection?: number;
  keepaliveIntervalMs?: number;
  /** Bytes kept per stream; more closes the channel and fails the request. */
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
}

export interface ExecOptions {
  /** Covers the wait for a free channel and the command itself. */
  timeoutMs?: number;
  priority?: Priority;
  /** Called once the command has its channel (it no longer waits behind anyone). */
  onRunning?: () => void;
}

/** A pooled connection, from the first request that asked for it; `ticket` while it waits for a slot. */
interface PoolEntry {
  conn: Promise<Conn>;
  ticket: ConnectTicket | null;
}

export class SshPool {
  private conns = new Map<string, PoolEntry>();
  private budget: ConnectBudget;
  private closed = false;

  constructor(private opts: PoolOptions) {
    this.budget = new ConnectBudget(opts.maxConcurrentConnects);
  }

  /** What makes two targets the same pooled connection (host, user, key, pin, jump chain). */
  keyOf(t: SshTarget): string {
    return JSON.stringify([t.name, t.user, t.host, t.port, t.identityFile ?? '', t.hostKey ?? '', t.proxyJump ? this.keyOf(t.proxyJump) : '']);
  }

  /**
   * Runs one fixed command; resolves with its output, rejects with an SshError. The timeout (a number
   * is the timeout alone) covers waiting for a free channel as well as the command; connecting, when
   * needed, has its own connect timeout.
   */
  async exec(target: SshTarget, command: string, options: number | ExecOptions = {}): Promise<ExecResult & { fingerprint: string; connectMs: number | null }> {
    const o = typeof options === 'number' ? { timeoutMs: options } : options;
    const timeoutMs = o.timeoutMs ?? this.opts.execTimeoutMs;
    const priority = o.priority ?? 'interactive';
    try {
      const fresh = !this.conns.has(this.keyOf(target));
      const conn = await this.connection(target, priority);
      const r = await runOn(conn, target, command, performance.now() + timeoutMs, timeoutMs, priority, this.opts, o.onRunning);
      return { ...r, fingerprint: conn.fingerprint, connectMs: fresh ? conn.connectMs : null };
    } catch (e) {
      throw e instanceof SshError
        ? e
        : new SshError(
            `ssh error (${addr(target)}): ${String((e as Error)?.message ?? e)
              .split('\n')[0]
              .slice(0, 160)}`,
            'other',
          );
    }
  }

  /**
   * Connects on a connection of its own (never the pooled one, which other requests may be using),
   * authenticates, and closes it: the host key fingerprint and how long connecting took.
   */
  async probe(target: SshTarget): Promise<{ fingerprint: string; connectMs: number }> {
    const c = await this.open(target, 'interactive');
    c.ssh.dispose();
    return { fingerprint: c.fingerprint, connectMs: c.connectMs };
  }

  /** The fingerprint the host presents, without authenticating or trusting it. */
  async fetchFingerprint(target: SshTarget): Promise<string> {
    let seen: string | null = null;
    try {
      const c = await this.open(target, 'interactive', (fp) => {
        seen = fp;
        return false;
      });
      c.ssh.dispose();
    } catch (e) {
      if (seen) return seen;
      throw e;
    }
    if (seen) return seen;
    throw new SshError('no host key received', 'other');
  }

  /** Ends the pooled connection to target (host removed or its key re-pinned by an admin). */
  drop(target: SshTarget): void {
    const key = this.keyOf(target);
    const entry = this.conns.get(key);
    if (!entry) return;
    this.conns.delete(key);
    entry.conn.then(
      (c) => c.ssh.dispose(),
      () => undefined,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.budget.shutdown(new SshError('pool closed', 'other'));
    const all = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(
      all.map((e) =>
        e.conn.then(
          (c) => c.ssh.dispose(),
          () => undefined,
        ),
      ),
    );
  }

  private connection(target: SshTarget, priority: Priority): Promise<Conn> {
    if (this.closed) return Promise.reject(new SshError('pool closed', 'other'));
    const key = this.keyOf(target);
    const existing = this.conns.get(key);
    if (existing) {
      if (priority === 'interactive') existing.ticket?.promote();
      return existing.conn;
    }
    const entry: PoolEntry = { conn: undefined as never, ticket: null };
    entry.conn = this.open(target, priority, undefined, entry).then(
      (conn) => {
        const forget = () => {
          if (conn.closed) return;
          conn.closed = true;
          // Only this connection's own entry: a newer connection to the same host is left alone.
          if (this.conns.get(key) === entry) this.conns.delete(key);
          conn.channels.breakAll(new SshError(`connection to ${addr(target)} dropped before the command started`, 'dropped'));
          for (const f of [...conn.onClose]) f();
        };
        conn.client.on('close', forget);
        conn.client.on('end', forget);
        conn.client.on('error', forget);
        return conn;
      },
      (e) => {
        if (this.conns.get(key) === entry) this.conns.delete(key);
        throw e;
      },
    );
    this.conns.set(key, entry);
    return entry.conn;
  }

  private async socketFor(target: SshTarget, priority: Priority): Promise<Duplex> {
    if (target.proxyJump) {
      // The hop's own pooled connection (kept for this host's requests), itself possibly behind the previous hop.
      const jump = await this.connection(target.proxyJump, priority);
      try {
        return await jump.ssh.forwardOut('127.0.0.1', 0, target.host, target.port);
      } catch (e) {
        throw new SshError(
          `cannot reach ${addr(target)} through ${target.proxyJump.name}: ${String((e as Error)?.message ?? e)
            .split('\n')[0]
            .slice(0, 160)}`,
          'unreachable',
        );
      }
    }
    const sock = netConnect({ host: target.host, port: target.port });
    sock.setNoDelay(true); // ssh2 leaves Nagle on
    sock.setKeepAlive(true, 15_000);
    return sock;
  }

  /**
   * One new connection. For a chat request the connect timeout covers the wait for a connect slot
   * too; the sampler's connects wait for their slot as long as it takes (nobody is waiting on them),
   * until a chat request joins one and promotes it.
   */
  private async open(target: SshTarget, priority: Priority, verifier?: (fp: string) => boolean, entry?: PoolEntry): Promise<Conn> {
    const started = performance.now();
    const timeoutMs = this.opts.connectTimeoutMs;
    const timedOut = (why = '') => new SshError(`timed out connecting to ${addr(target)} after ${(timeoutMs / 1000).toFixed(1)} s${why}`, 'timeout');
    if (this.closed) throw new SshError('pool closed', 'other');
    const ticket = this.budget.join(priority);
    if (entry) entry.ticket = ticket;
    try {
      for (;;) {
        const changed = ticket.changed;
        if (ticket.heldAs) break;
        if (ticket.failed) throw ticket.failed;
        const since = ticket.interactiveSince;
        const inTime = await within(changed, since === null ? Infinity : since + timeoutMs);
        if (ticket.heldAs) break;
        const failed = ticket.failure();
        if (failed) throw failed;
        if (!inTime) throw timedOut(' (every connect slot was busy)');
      }
      if (entry) entry.ticket = null;
      const deadline = (ticket.interactiveSince ?? performance.now()) + timeoutMs;
      return await this.handshake(target, priority, deadline, started, timedOut, verifier);
    } finally {
      if (entry) entry.ticket = null;
      ticket.finish();
    }
  }

  private handshake(
    target: SshTarget,
    priority: Priority,
    deadline: number,
    started: number,
    timedOut: () => SshError,
    verifier?: (fp: string) => boolean,
  ): Promise<Conn> {
    let sock: Duplex | undefined;
    const ssh = new NodeSSH();
    let client: Client | null = null;
    return new Promise<Conn>((resolve, reject) => {
      let settled = false;
      let fingerprint = '';
      let hostKeyError: SshError | null = null;
      let sockError: NodeJS.ErrnoException | null = null;
      let authNote = '';
      const fail = (e: SshError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        client?.destroy();
        sock?.destroy();
        reject(e);
      };
      const timer = setTimeout(() => fail(timedOut()), Math.max(0, deadline - performance.now()));
      const failWith = (err: Error & { level?: string; code?: string }) => {
        if (settled) return;
        if (hostKeyError) return fail(hostKeyError);
        if (sockError || err.level || (err.code && err.code !== 'ERR_ASSERTION')) return fail(describe(sockError ?? err, target, authNote));
        // Thrown by ssh2 or node-ssh before anything was sent (a key it cannot use): this host's error line.
        const msg = String(err?.message ?? err)
          .split('\n')[0]
          .slice(0, 160);
        fail(new SshError(`cannot connect to ${target.name}: ${msg}`, /key/i.test(msg) ? 'auth' : 'other'));
      };
      const start = (s: Duplex) => {
        sock = s;
        if (settled) return s.destroy();
        s.on('error', (e: NodeJS.ErrnoException) => {
          sockError = e;
          fail(describe(e, target));
        });
        const prepared = connectConfig(target, s, this.opts);
        if ('error' in prepared) return fail(prepared.error);
        const cfg = prepared.cfg;
        authNote = prepared.authNote;
        cfg.hostVerifier = (key: Buffer) => {
          try {
            fingerprint = fingerprintOf(key);
            if (verifier) return verifier(fingerprint);
            const v = verifyHostKey(this.opts.knownHosts, target, key, fingerprint);
            if (!v.ok) hostKeyError = v.error;
            return v.ok;
          } catch (e) {
            hostKeyError = new SshError(`cannot check the host key of ${target.name}: ${(e as Error).message}`, 'other');
            return false;
          }
        };
        const connecting = ssh.connect(cfg);
        // Given the key itself (not a path), node-ssh makes its ssh2 connection before connect returns:
        // listened to at once, so no error of it is unheard between node-ssh's handlers and the pool's.
        client = ssh.connection;
        if (client) {
          // Every exec and forward node-ssh starts listens for 'error' until answered: a jump host carrying
          // many hosts' forwards would pass Node's default of 10.
          client.setMaxListeners(0);
          client.on('error', failWith);
          client.on('close', () => {
            if (hostKeyError) fail(hostKeyError);
            else fail(new SshError(`connection closed by ${addr(target)} during handshake`, 'dropped'));
          });
        }
        connecting.then(() => {
          const c = ssh.connection ?? client;
          if (settled || !c) {
            ssh.dispose();
            return fail(new SshError(`connection closed by ${addr(target)} during handshake`, 'dropped'));
          }
          settled = true;
          clearTimeout(timer);
          resolve({
            ssh,
            client: c,
            channels: new ChannelSlots(this.opts.maxChannelsPerConnection ?? 8),
            fingerprint,
            closed: false,
            connectMs: Math.round(performance.now() - started),
            onClose: new Set(),
            lastChannelClose: -Infinity,
          });
        }, failWith);
      };
      this.socketFor(target, priority)
        .then(start, (e: Error) => fail(e instanceof SshError ? e : describe(e, target)))
        .catch((e: unknown) => failWith(e instanceof Error ? e : new Error(String(e))));
    });
  }
}
