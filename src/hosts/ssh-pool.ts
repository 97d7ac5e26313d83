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
import { t } from '../core/i18n.js';
import { NodeSSH, type Config as NodeSshConfig } from 'node-ssh';
import type { Client, ClientChannel } from 'ssh2';
import { connect as netConnect } from 'node:net';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Duplex } from 'node:stream';
import { checkIdentityFile } from './identity.js';
import { algorithmsFor, fingerprintOf, KnownHosts } from './known-hosts.js';

export interface SshTarget {
  /** Registry name, for messages ("hosts trust NAME"). */
  name: string;
  host: string;
  port: number;
  user: string;
  identityFile?: string;
  /** Pinned SHA256 fingerprint; when absent, known_hosts decides. */
  hostKey?: string;
  /** Where the pin comes from, for the "changed" message: the config file or a trust made in chat. */
  pinnedBy?: 'config' | 'trust';
  proxyJump?: SshTarget;
}

export type Priority = 'interactive' | 'background';

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
}

export class SshError extends Error {
  constructor(
    message: string,
    readonly kind:
      | 'refused'
      | 'timeout'
      | 'auth'
      | 'hostkey-unknown'
      | 'hostkey-changed'
      | 'dns'
      | 'unreachable'
      | 'dropped'
      | 'exec-timeout'
      | 'channel-refused'
      | 'output-cap'
      | 'other',
    readonly fingerprint?: string,
  ) {
    super(message);
  }
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  ms: number;
}

export const DEFAULT_MAX_STDOUT_BYTES = 8 << 20;
export const DEFAULT_MAX_STDERR_BYTES = 1 << 20;

/** Resolves true when `p` resolves before the deadline, false at the deadline. */
function within(p: Promise<void>, deadline: number): Promise<boolean> {
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** A place in line for a connect slot; `finish` gives the slot back (or leaves the line). */
class ConnectTicket {
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
class ConnectBudget {
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
class ChannelSlots {
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

interface Conn {
  ssh: NodeSSH;
  /** node-ssh's ssh2 connection, kept: node-ssh forgets it on 'end', the pool still listens to it. */
  client: Client;
  channels: ChannelSlots;
  fingerprint: string;
  closed: boolean;
  connectMs: number;
  /** Called once when the connection goes away (requests running on it fail at once). */
  onClose: Set<() => void>;
  /** When a channel of ours on it last closed (performance.now()). */
  lastChannelClose: number;
}

/** A pooled connection, from the first request that asked for it; `ticket` while it waits for a slot. */
interface PoolEntry {
  conn: Promise<Conn>;
  ticket: ConnectTicket | null;
}

const addr = (t: SshTarget) => `${t.host}:${t.port}`;

function closeChannel(channel: ClientChannel | null): void {
  if (!channel) return;
  try {
    channel.close();
  } catch {
    /* already closed with its connection */
  }
}

export class SshPool {
  private conns = new Map<string, PoolEntry>();
  private budget: ConnectBudget;
  private closed = false;

  constructor(private opts: PoolOptions) {
    this.budget = new ConnectBudget(opts.maxConcurrentConnects);
  }

  private keyOf(t: SshTarget): string {
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
      const r = await this.runOn(conn, target, command, performance.now() + timeoutMs, timeoutMs, priority);
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

  private verify(target: SshTarget, blob: Buffer, fp: string): { ok: true } | { ok: false; error: SshError } {
    const known = this.opts.knownHosts?.lookup(target.host, target.port) ?? [];
    // @revoked wins wherever its line stands, and over a pin too (as in OpenSSH).
    if (known.some((k) => k.revoked && k.blob.equals(blob)))
      return {
        ok: false,
        error: new SshError(t('en', 'reason.ssh.revoked', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-changed', fp),
      };
    if (target.hostKey) {
      if (fp === target.hostKey) return { ok: true };
      // Made in English (reason.*); /gpu status and hosts test show them in the asker's language.
      const vars = { name: target.name, addr: addr(target), expected: target.hostKey, fingerprint: fp };
      return {
        ok: false,
        error: new SshError(t('en', target.pinnedBy === 'config' ? 'reason.ssh.changedPinned' : 'reason.ssh.changed', vars), 'hostkey-changed', fp),
      };
    }
    const valid = known.filter((k) => !k.revoked);
    if (valid.some((k) => k.blob.equals(blob))) return { ok: true };
    if (valid.length > 0)
      return {
        ok: false,
        error: new SshError(t('en', 'reason.ssh.changedKnownHosts', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-changed', fp),
      };
    if (this.opts.knownHosts?.certAuthorities(target.host, target.port).length)
      return {
        ok: false,
        error: new SshError(
          // Kept under the 300 characters of an error line: `hosts trust NAME` shows the key again and how to confirm it.
          t('en', 'reason.ssh.certAuthority', { name: target.name, addr: addr(target), fingerprint: fp }),
          'hostkey-unknown',
          fp,
        ),
      };
    return {
      ok: false,
      error: new SshError(t('en', 'reason.ssh.unknown', { name: target.name, addr: addr(target), fingerprint: fp }), 'hostkey-unknown', fp),
    };
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
        const prepared = this.connectConfig(target, s);
        if ('error' in prepared) return fail(prepared.error);
        const cfg = prepared.cfg;
        authNote = prepared.authNote;
        cfg.hostVerifier = (key: Buffer) => {
          try {
            fingerprint = fingerprintOf(key);
            if (verifier) return verifier(fingerprint);
            const v = this.verify(target, key, fingerprint);
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

  private connectConfig(target: SshTarget, sock: Duplex): { cfg: NodeSshConfig; authNote: string } | { error: SshError } {
    const cfg: NodeSshConfig = {
      sock,
      username: target.user,
      readyTimeout: this.opts.connectTimeoutMs + 1000,
      keepaliveInterval: this.opts.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: 3,
      tryKeyboard: false,
    };
    const agent = this.opts.agent;
    if (agent) cfg.agent = agent;
    let authNote = '';
    const keyFile = target.identityFile ?? this.opts.defaultIdentityFile ?? defaultIdentity();
    if (keyFile) {
      const key = checkIdentityFile(keyFile);
      // The key itself, not its path: node-ssh then connects without a read of its own (see handshake).
      if (key.ok && !key.encrypted) cfg.privateKey = key.key.toString('utf8');
      else if (key.ok && key.encrypted) {
        // The bot never asks for passphrases: such a key works only through the agent holding it.
        if (!agent)
          return {
            error: new SshError(
              `auth failed (${target.user}@${addr(target)}): identity file ${keyFile} is passphrase-protected and no ssh agent is set (SSH_AUTH_SOCK)`,
              'auth',
            ),
          };
        authNote = ` (identity file ${keyFile} is passphrase-protected: only the ssh agent's keys were offered)`;
      } else if (!agent) return { error: new SshError(`auth failed (${target.user}@${addr(target)}): ${key.problem}`, 'auth') };
      else authNote = ` (${key.problem}: only the ssh agent's keys were offered)`;
    }
    if (!cfg.privateKey && !agent) return { error: new SshError(`no identity file and no ssh agent for ${target.name}`, 'auth') };
    if (!target.hostKey) {
      const types = (this.opts.knownHosts?.lookup(target.host, target.port) ?? []).filter((k) => !k.revoked).map((k) => k.type);
      if (types.length) cfg.algorithms = { serverHostKey: algorithmsFor(types) as never };
    }
    return { cfg, authNote };
  }

  /** Waits for a channel (within the deadline) and runs the command on it. */
  private async runOn(conn: Conn, target: SshTarget, command: string, deadline: number, timeoutMs: number, priority: Priority): Promise<ExecResult> {
    const seconds = (timeoutMs / 1000).toFixed(1);
    const busy = () => new SshError(`timed out after ${seconds} s waiting for ${target.name} (all ${conn.channels.limit} channels busy)`, 'exec-timeout');
    let refused = false;
    for (;;) {
      const release = await conn.channels.acquire(priority, deadline, busy, refused);
      let pause = 0;
      try {
        for (let quickRetries = 0; ; quickRetries++) {
          // Granted in the same moment the deadline passed: no channel is opened for an answer nobody awaits.
          if (performance.now() >= deadline) throw busy();
          const sentAt = performance.now();
          try {
            return await this.execOn(conn, target, command, deadline, timeoutMs);
          } catch (e) {
            if (!(e instanceof SshError) || e.kind !== 'channel-refused') throw e;
            // A refused channel is not a broken connection: nothing is dropped, the request tries
            // again within its deadline. sshd frees a closed session only after handling every packet
            // it read with the close, so an open sent shortly after one of ours closed can be refused
            // although a session is free by the time the refusal arrives: retried at once, on this slot.
            if (sentAt - conn.lastChannelClose < 1000 && quickRetries < 3) continue;
            throw e;
          }
        }
      } catch (e) {
        if (!(e instanceof SshError) || e.kind !== 'channel-refused') throw e;
        // The host allows fewer sessions (sshd MaxSessions) than this pool opens: stay under what it
        // accepted, and wait for one of ours to end, first in line.
        refused = true;
        const others = conn.channels.busy - 1;
        conn.channels.lowerTo(others);
        // None of ours open: sessions the host still counts (closing ones) are in the way.
        if (others === 0) pause = 200;
        if (performance.now() >= deadline) throw new SshError(`timed out after ${seconds} s waiting for ${target.name} (${e.message})`, 'exec-timeout');
      } finally {
        release();
      }
      if (pause) await sleep(Math.min(pause, deadline - performance.now()));
    }
  }

  private execOn(conn: Conn, target: SshTarget, command: string, deadline: number, timeoutMs: number): Promise<ExecResult> {
    const started = performance.now();
    const maxOut = this.opts.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
    const maxErr = this.opts.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES;
    return new Promise<ExecResult>((resolve, reject) => {
      let channel: ClientChannel | null = null;
      let done = false;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let code: number | null = null;
      // stdin stays open for the whole command: node-ssh ends the channel's stdin at once unless given a
      // stream, and an EOF there is what the remote watchdog (CHANNEL_WATCHDOG) takes for "the bot gave up".
      const stdin = new PassThrough();
      const finish = (e: SshError | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        stdin.unpipe();
        stdin.destroy();
        conn.onClose.delete(onClose);
        if (channel) conn.lastChannelClose = performance.now();
        if (e) {
          // Given up (timeout, cap, error): close the channel so its session on the host ends too.
          closeChannel(channel);
          reject(e);
        } else
          resolve({
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
            code,
            ms: Math.round(performance.now() - started),
          });
      };
      const onClose = () => finish(new SshError(`connection to ${addr(target)} dropped during the command`, 'dropped'));
      const timer = setTimeout(
        () => finish(new SshError(`timed out after ${(timeoutMs / 1000).toFixed(1)} s waiting for ${target.name}`, 'exec-timeout')),
        Math.max(0, deadline - performance.now()),
      );
      if (conn.closed) return onClose();
      conn.onClose.add(onClose);
      const capped = (stream: 'stdout' | 'stderr', max: number) =>
        new SshError(`${target.name} sent more than ${Math.round(max / 1024)} KiB on ${stream}; stopped reading and closed the channel`, 'output-cap');
      // node-ssh's execCommand: each chunk is counted and kept here as it arrives (its own string copy is
      // not used: it is cut per chunk), and the channel comes through onChannel, so the pool can close it.
      conn.ssh
        .execCommand(command, {
          noTrim: true,
          stdin,
          onChannel: (stream) => {
            // Opened after the bot gave up: closed at once, never left running on the host.
            if (done) {
              conn.lastChannelClose = performance.now();
              stream.on('error', () => undefined);
              return closeChannel(stream);
            }
            channel = stream;
            stream.on('error', (x: Error) => finish(new SshError(`channel error on ${addr(target)}: ${x.message.split('\n')[0].slice(0, 160)}`, 'other')));
          },
          onStdout: (d) => {
            if (done) return;
            outBytes += d.length;
            if (outBytes > maxOut) return finish(capped('stdout', maxOut));
            out.push(d);
          },
          onStderr: (d) => {
            if (done) return;
            errBytes += d.length;
            if (errBytes > maxErr) return finish(capped('stderr', maxErr));
            err.push(d);
          },
        })
        .then(
          (r) => {
            if (conn.closed) return onClose();
            code = r.code;
            finish(null);
          },
          (e: Error) => {
            if (conn.closed) return onClose();
            // A refused channel is that channel's answer, not a broken connection.
            const opening = /channel open failure/i.test(e.message);
            const broken = /not connected/i.test(e.message);
            finish(
              broken
                ? new SshError(`connection to ${addr(target)} is broken: ${e.message}`, 'dropped')
                : new SshError(
                    `${opening ? 'the host refused a channel' : 'the host refused the command'} on ${addr(target)}: ${e.message.replace(/^\(SSH\) /, '')}`,
                    opening ? 'channel-refused' : 'other',
                  ),
            );
          },
        );
    });
  }
}

function defaultIdentity(): string | undefined {
  for (const f of ['id_ed25519', 'id_ecdsa', 'id_rsa']) {
    const p = join(homedir(), '.ssh', f);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function describe(err: Error & { code?: string; level?: string }, target: SshTarget, authNote = ''): SshError {
  const a = addr(target);
  switch (err.code) {
    case 'ECONNREFUSED':
      return new SshError(`connection refused (${a})`, 'refused');
    case 'ETIMEDOUT':
      return new SshError(`timed out connecting to ${a}`, 'timeout');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SshError(`host not found (${target.host})`, 'dns');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new SshError(`host unreachable (${a})`, 'unreachable');
    case 'ECONNRESET':
    case 'EPIPE':
      return new SshError(`connection reset by ${a}`, 'dropped');
    default:
      break;
  }
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(err.message))
    return new SshError(`auth failed (${target.user}@${a}): key not accepted${authNote}`, 'auth');
  if (/timed out/i.test(err.message)) return new SshError(`timed out connecting to ${a}`, 'timeout');
  return new SshError(`ssh error (${a}): ${err.message.split('\n')[0].slice(0, 160)}`, 'other');
}
