// One persistent ssh2 connection per host: TCP_NODELAY, keepalives, at most 8 channels each, a global
// cap on concurrent connects, connect and exec timeouts, strict host key checking, no passwords.
// A connection that errors or closes is dropped and rebuilt on next use.
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { connect as netConnect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
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
  proxyJump?: SshTarget;
}

export interface PoolOptions {
  connectTimeoutMs: number;
  execTimeoutMs: number;
  maxConcurrentConnects: number;
  knownHosts?: KnownHosts;
  /** Tried when a target has no identity file of its own. */
  defaultIdentityFile?: string;
  agent?: string;
  maxChannelsPerConnection?: number;
  keepaliveIntervalMs?: number;
}

export class SshError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'timeout' | 'auth' | 'hostkey-unknown' | 'hostkey-changed' | 'dns' | 'unreachable' | 'dropped' | 'exec-timeout' | 'other',
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

class Semaphore {
  private waiting: (() => void)[] = [];
  constructor(private free: number) {}
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

interface Conn {
  client: Client;
  channels: Semaphore;
  fingerprint: string;
  closed: boolean;
  connectMs: number;
}

const addr = (t: SshTarget) => `${t.host}:${t.port}`;

export class SshPool {
  private conns = new Map<string, Promise<Conn>>();
  private connectSlots: Semaphore;
  private closed = false;

  constructor(private opts: PoolOptions) {
    this.connectSlots = new Semaphore(opts.maxConcurrentConnects);
  }

  private keyOf(t: SshTarget): string {
    return JSON.stringify([t.name, t.user, t.host, t.port, t.identityFile ?? '', t.hostKey ?? '', t.proxyJump ? this.keyOf(t.proxyJump) : '']);
  }

  /** Runs one fixed command; resolves with its output, rejects with an SshError. */
  async exec(target: SshTarget, command: string, timeoutMs = this.opts.execTimeoutMs): Promise<ExecResult & { fingerprint: string; connectMs: number | null }> {
    const fresh = !this.conns.has(this.keyOf(target));
    const conn = await this.connection(target);
    await conn.channels.acquire();
    try {
      const r = await this.execOn(conn, target, command, timeoutMs);
      return { ...r, fingerprint: conn.fingerprint, connectMs: fresh ? conn.connectMs : null };
    } finally {
      conn.channels.release();
    }
  }

  /** Connects (or reuses) and returns the host key fingerprint and how long connecting took. */
  async connectOnly(target: SshTarget): Promise<{ fingerprint: string; connectMs: number }> {
    const c = await this.connection(target);
    return { fingerprint: c.fingerprint, connectMs: c.connectMs };
  }

  /** The fingerprint the host presents, without authenticating or trusting it. */
  async fetchFingerprint(target: SshTarget): Promise<string> {
    let seen: string | null = null;
    try {
      const c = await this.open(target, (fp) => {
        seen = fp;
        return false;
      });
      c.client.end();
    } catch (e) {
      if (seen) return seen;
      throw e;
    }
    if (seen) return seen;
    throw new SshError('no host key received', 'other');
  }

  drop(target: SshTarget): void {
    const key = this.keyOf(target);
    const p = this.conns.get(key);
    this.conns.delete(key);
    p?.then((c) => c.client.end(), () => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.conns.values()];
    this.conns.clear();
    await Promise.all(all.map((p) => p.then((c) => c.client.end(), () => undefined)));
  }

  private connection(target: SshTarget): Promise<Conn> {
    if (this.closed) return Promise.reject(new SshError('pool closed', 'other'));
    const key = this.keyOf(target);
    const existing = this.conns.get(key);
    if (existing) return existing;
    const p = this.open(target).then(
      (conn) => {
        const forget = () => {
          conn.closed = true;
          if (this.conns.get(key) === p) this.conns.delete(key);
        };
        conn.client.on('close', forget);
        conn.client.on('end', forget);
        conn.client.on('error', forget);
        return conn;
      },
      (e) => {
        if (this.conns.get(key) === p) this.conns.delete(key);
        throw e;
      },
    );
    this.conns.set(key, p);
    return p;
  }

  private verify(target: SshTarget, blob: Buffer, fp: string): { ok: true } | { ok: false; error: SshError } {
    if (target.hostKey) {
      if (fp === target.hostKey) return { ok: true };
      return {
        ok: false,
        error: new SshError(
          `HOST KEY CHANGED for ${target.name} (${addr(target)}): expected ${target.hostKey}, got ${fp}. Refusing to connect (possible man-in-the-middle); if the host was reinstalled, an admin can run \`hosts trust ${target.name}\``,
          'hostkey-changed',
          fp,
        ),
      };
    }
    const known = this.opts.knownHosts?.lookup(target.host, target.port) ?? [];
    const match = known.find((k) => k.blob.equals(blob));
    if (match && !match.revoked) return { ok: true };
    if (match?.revoked) return { ok: false, error: new SshError(`host key revoked for ${target.name} (${addr(target)}): ${fp}`, 'hostkey-changed', fp) };
    if (known.length > 0)
      return {
        ok: false,
        error: new SshError(
          `HOST KEY CHANGED for ${target.name} (${addr(target)}): known_hosts has a different key, host presented ${fp}. Refusing to connect (possible man-in-the-middle)`,
          'hostkey-changed',
          fp,
        ),
      };
    return {
      ok: false,
      error: new SshError(`host key unknown for ${target.name} (${addr(target)}): ${fp}; refused (an admin can trust it with \`hosts trust ${target.name}\`)`, 'hostkey-unknown', fp),
    };
  }

  private async socketFor(target: SshTarget): Promise<Duplex> {
    if (target.proxyJump) {
      const jump = await this.connection(target.proxyJump);
      return await new Promise<Duplex>((resolve, reject) => {
        jump.client.forwardOut('127.0.0.1', 0, target.host, target.port, (err, stream) => {
          if (err) reject(new SshError(`cannot reach ${addr(target)} through ${target.proxyJump!.name}: ${err.message}`, 'unreachable'));
          else resolve(stream);
        });
      });
    }
    const sock = netConnect({ host: target.host, port: target.port });
    sock.setNoDelay(true);
    sock.setKeepAlive(true, 15_000);
    return sock;
  }

  private async open(target: SshTarget, verifier?: (fp: string) => boolean): Promise<Conn> {
    await this.connectSlots.acquire();
    const started = performance.now();
    let sock: Duplex | undefined;
    const client = new Client();
    try {
      return await new Promise<Conn>((resolve, reject) => {
        let settled = false;
        let fingerprint = '';
        let hostKeyError: SshError | null = null;
        let sockError: NodeJS.ErrnoException | null = null;
        const fail = (e: SshError) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          client.destroy();
          sock?.destroy();
          reject(e);
        };
        const timer = setTimeout(
          () => fail(new SshError(`timed out connecting to ${addr(target)} after ${(this.opts.connectTimeoutMs / 1000).toFixed(1)} s`, 'timeout')),
          this.opts.connectTimeoutMs,
        );
        client.on('ready', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ client, channels: new Semaphore(this.opts.maxChannelsPerConnection ?? 8), fingerprint, closed: false, connectMs: Math.round(performance.now() - started) });
        });
        client.on('error', (err: Error & { level?: string; code?: string }) => {
          if (settled) return;
          if (hostKeyError) return fail(hostKeyError);
          fail(describe(sockError ?? err, target));
        });
        client.on('close', () => {
          if (hostKeyError) fail(hostKeyError);
          else fail(new SshError(`connection closed by ${addr(target)} during handshake`, 'dropped'));
        });
        this.socketFor(target).then(
          (s) => {
            sock = s;
            if (settled) return s.destroy();
            s.on('error', (e: NodeJS.ErrnoException) => {
              sockError = e;
              fail(describe(e, target));
            });
            let cfg: ConnectConfig;
            try {
              cfg = this.connectConfig(target, s);
            } catch (e) {
              return fail(e instanceof SshError ? e : new SshError((e as Error).message, 'other'));
            }
            cfg.hostVerifier = ((key: Buffer) => {
              fingerprint = fingerprintOf(key);
              if (verifier) return verifier(fingerprint);
              const v = this.verify(target, key, fingerprint);
              if (!v.ok) hostKeyError = v.error;
              return v.ok;
            }) as ConnectConfig['hostVerifier'];
            client.connect(cfg);
          },
          (e) => fail(e instanceof SshError ? e : describe(e, target)),
        );
      });
    } finally {
      this.connectSlots.release();
    }
  }

  private connectConfig(target: SshTarget, sock: Duplex): ConnectConfig {
    const cfg: ConnectConfig = {
      sock: sock as ConnectConfig['sock'],
      username: target.user,
      readyTimeout: this.opts.connectTimeoutMs + 1000,
      keepaliveInterval: this.opts.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: 3,
      tryKeyboard: false,
    };
    const agent = this.opts.agent;
    if (agent) cfg.agent = agent;
    const keyFile = target.identityFile ?? this.opts.defaultIdentityFile ?? defaultIdentity();
    if (keyFile) {
      try {
        cfg.privateKey = readFileSync(keyFile);
      } catch (e) {
        if (!agent) throw new SshError(`cannot read identity file ${keyFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'auth');
      }
    }
    if (!cfg.privateKey && !agent) throw new SshError(`no identity file and no ssh agent for ${target.name}`, 'auth');
    if (!target.hostKey) {
      const types = (this.opts.knownHosts?.lookup(target.host, target.port) ?? []).map((k) => k.type);
      if (types.length) cfg.algorithms = { serverHostKey: algorithmsFor(types) as never };
    }
    return cfg;
  }

  private execOn(conn: Conn, target: SshTarget, command: string, timeoutMs: number): Promise<ExecResult> {
    const started = performance.now();
    return new Promise<ExecResult>((resolve, reject) => {
      let channel: ClientChannel | null = null;
      let done = false;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let code: number | null = null;
      const finish = (e: SshError | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        conn.client.removeListener('close', onClose);
        if (e) {
          channel?.close();
          reject(e);
        } else resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code, ms: Math.round(performance.now() - started) });
      };
      const onClose = () => finish(new SshError(`connection to ${addr(target)} dropped during the command`, 'dropped'));
      conn.client.once('close', onClose);
      const timer = setTimeout(() => finish(new SshError(`timed out after ${(timeoutMs / 1000).toFixed(1)} s waiting for ${target.name}`, 'exec-timeout')), timeoutMs);
      if (conn.closed) return onClose();
      try {
        conn.client.exec(command, (e, stream) => {
          if (e) {
            this.drop(target);
            return finish(new SshError(`cannot open a channel on ${addr(target)}: ${e.message}`, 'dropped'));
          }
          channel = stream;
          let size = 0;
          stream.on('data', (d: Buffer) => {
            size += d.length;
            if (size < 8 << 20) out.push(d);
          });
          stream.stderr.on('data', (d: Buffer) => {
            if (size < 8 << 20) err.push(d);
          });
          stream.on('exit', (c: number | null) => {
            code = typeof c === 'number' ? c : null;
          });
          stream.on('close', () => {
            if (conn.closed) return onClose();
            finish(null);
          });
        });
      } catch (e) {
        this.drop(target);
        finish(new SshError(`connection to ${addr(target)} is broken: ${(e as Error).message}`, 'dropped'));
      }
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

function describe(err: Error & { code?: string; level?: string }, target: SshTarget): SshError {
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
  }
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(err.message))
    return new SshError(`auth failed (${target.user}@${a}): key not accepted`, 'auth');
  if (/timed out/i.test(err.message)) return new SshError(`timed out connecting to ${a}`, 'timeout');
  return new SshError(`ssh error (${a}): ${err.message.split('\n')[0].slice(0, 160)}`, 'other');
}
