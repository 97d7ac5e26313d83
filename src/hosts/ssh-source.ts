// SSH hosts as a host source: the registry's hosts, reached through the ssh config (ProxyJump chains
// included) and the pool, their keys checked against pins and known_hosts. Each host is bounded by its
// own connect + exec timeouts, so a dead host never holds up the others.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { english, message, MessageError, type Message } from '../core/message.js';
import { resolvePath } from '../core/config.js';
import type { HostAddRequest, HostInfo, HostMemResult, HostStatusResult } from '../core/services.js';
import type { Config } from '../config.js';
import { sshHostsOf } from '../config.js';
import { identityProblem } from './identity.js';
import { fingerprintOf, KnownHosts } from './known-hosts.js';
import { splitSections, type Sections } from './parse.js';
import { FINGERPRINT, type HostEntry, type RegistryStore } from './registry.js';
import { MEM_COMMAND, STATUS_COMMAND } from './remote-commands.js';
import { memFromSections, statusFromSections } from './sections-result.js';
import { errorLine, hostInfo, type HostSource, type Priority } from './source.js';
import { SshConfig, SshConfigError, expandHome, parseJumpChain } from './ssh-config.js';
import { SshError, SshPool, type SshTarget } from './ssh-pool.js';

/** Hops a chain of ProxyJumps may take before it is taken for a loop. */
const MAX_JUMP_DEPTH = 8;

/** One exec of a fixed command on one host, shared by every request that asks for it while it runs. */
interface Flight {
  sections: Promise<Sections>;
  priority: Priority;
  /** It has its channel: a chat request joining it waits behind nobody. */
  running: boolean;
}

export interface SshHostSourceOptions {
  config: Config;
  baseDir: string;
  /** The agent socket, or null for none. */
  agent: string | null | undefined;
  /** The registry the hosts are listed in: trusts and added hosts are written there. */
  registry: RegistryStore;
}

export class SshHostSource implements HostSource {
  readonly label = 'SSH';
  readonly pool: SshPool;
  private readonly sshConfig: SshConfig;
  private readonly knownHosts: KnownHosts;
  private readonly config: Config;
  private readonly baseDir: string;
  private readonly hasAgent: boolean;
  private readonly reg: RegistryStore;
  /** Identity files of the config the bot cannot use (resolved path -> the line naming it), checked again before each use. */
  private readonly refusedKeys: Map<string, string>;
  /** Execs in flight by command and pooled connection (see runSections). */
  private readonly inFlight = new Map<string, Flight>();

  constructor(opts: SshHostSourceOptions) {
    const { config, baseDir, agent } = opts;
    this.config = config;
    this.baseDir = baseDir;
    this.reg = opts.registry;
    this.hasAgent = Boolean(agent);
    // A key the bot cannot use refuses the hosts that would use it, each with one line; the others start.
    this.refusedKeys = checkConfiguredKeys(config, baseDir, this.hasAgent);
    for (const problem of new Set(this.refusedKeys.values())) process.stderr.write(`hosts: ${english(message('reason.hosts.keyRefused', { problem }))}\n`);
    this.sshConfig = SshConfig.load(config.ssh.config_file ? resolvePath(config.ssh.config_file, baseDir) : undefined);
    this.knownHosts = KnownHosts.load(resolvePath(config.ssh.known_hosts ?? '~/.ssh/known_hosts', baseDir));
    this.pool = new SshPool({
      connectTimeoutMs: config.ssh.connect_timeout_ms,
      execTimeoutMs: config.ssh.exec_timeout_ms,
      maxConcurrentConnects: config.ssh.max_concurrent_connects,
      knownHosts: this.knownHosts,
      ...(config.ssh.identity_file ? { defaultIdentityFile: resolvePath(config.ssh.identity_file, baseDir) } : {}),
      ...(agent ? { agent } : {}),
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /**
   * Where a host entry leads, resolved through the ssh config as `ssh -G` would (the entry's own port
   * and user win, like -p and -l), with its ProxyJump chain: `ProxyJump a,b` reaches b through a and
   * the host through b; the first hop's own ProxyJump applies, later hops' do not (as in ssh -J).
   * Throws SshError when the ssh config cannot be followed for this host.
   */
  target(entry: HostEntry): SshTarget {
    try {
      return this.resolveTarget(entry.name, entry.host, entry, 0);
    } catch (e) {
      if (e instanceof SshConfigError) throw new SshError(`${entry.name}: ${e.message}`, 'other');
      throw e;
    }
  }

  private resolveTarget(name: string, alias: string, entry: Partial<HostEntry>, depth: number, jumpOverride?: SshTarget | null): SshTarget {
    if (depth > MAX_JUMP_DEPTH) throw new SshConfigError(`ProxyJump chain of ${name} is longer than ${MAX_JUMP_DEPTH} hops (a loop?)`);
    const resolved = this.sshConfig.resolve(alias, { ...(entry.user ? { user: entry.user } : {}), ...(entry.port ? { port: entry.port } : {}) });
    let proxyJump: SshTarget | null | undefined = jumpOverride;
    if (proxyJump === undefined && resolved.proxyJump) {
      const hops = parseJumpChain(resolved.proxyJump);
      proxyJump = null;
      hops.forEach((hop, i) => {
        const hopEntry = { ...(hop.user ? { user: hop.user } : {}), ...(hop.port ? { port: hop.port } : {}) };
        // The first hop follows its own config (its ProxyJump too); each later one is reached through the previous.
        proxyJump = this.resolveTarget(`${name}-jump${hops.length > 1 ? i + 1 : ''}`, hop.host, hopEntry, depth + 1, i === 0 ? undefined : proxyJump);
      });
    }
    const identityFile = entry.identityFile ?? resolved.identityFiles.find((f) => existsSync(f)) ?? resolved.identityFiles[0];
    return {
      name,
      host: resolved.hostName,
      port: resolved.port ?? 22,
      user: resolved.user ?? userInfo().username,
      ...(identityFile ? { identityFile: expandHome(identityFile) } : {}),
      ...(entry.hostKey ? { hostKey: entry.hostKey, ...(entry.pinnedBy ? { pinnedBy: entry.pinnedBy } : {}) } : {}),
      ...(proxyJump ? { proxyJump } : {}),
    };
  }

  /**
   * The command's sections. Single flight per host: a request arriving while an exec that prints what
   * it needs runs on that host (status prints mem's sections too) shares that exec's output, its
   * failure or its timeout, so ten people asking at once (or the watch round with them) cost the host
   * one nvidia-smi and a hung host one channel. A request after it ended starts a new exec: nothing is
   * cached. A chat request joins a sampler's exec only once it has its channel; before that it would
   * wait behind chat requests for it, so the chat request runs its own.
   */
  private async runSections(entry: HostEntry, command: 'status' | 'mem', priority: Priority = 'interactive'): Promise<Sections> {
    const target = this.target(entry);
    const refused = this.keyRefusal(target);
    if (refused) throw new SshError(refused, 'auth');
    const connection = this.pool.keyOf(target);
    const joinable = (kind: 'status' | 'mem') => {
      const f = this.inFlight.get(`${kind} ${connection}`);
      return f && (priority === 'background' || f.priority === 'interactive' || f.running) ? f : undefined;
    };
    const shared = joinable('status') ?? (command === 'mem' ? joinable('mem') : undefined);
    if (shared) return shared.sections;
    const key = `${command} ${connection}`;
    const flight: Flight = { priority, running: false, sections: undefined as never };
    flight.sections = this.pool
      .exec(target, command === 'status' ? STATUS_COMMAND : MEM_COMMAND, { priority, onRunning: () => (flight.running = true) })
      .then((r) => splitSections(r.stdout))
      .finally(() => {
        // Only this flight's own entry: a chat request's exec started beside a waiting sampler's is left alone.
        if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
      });
    this.inFlight.set(key, flight);
    return flight.sections;
  }

  /** The line refusing a host whose identity file the start-up check refused, unless the file is usable by now. */
  private keyRefusal(target: SshTarget): Message | null {
    const keyFile = target.identityFile ?? (this.config.ssh.identity_file ? resolvePath(this.config.ssh.identity_file, this.baseDir) : undefined);
    const problem = keyFile === undefined ? undefined : this.refusedKeys.get(keyFile);
    if (problem === undefined) return null;
    // Fixed since (a key without its passphrase put in place, an agent): used from now on.
    if (identityProblem(keyFile!, this.hasAgent) === null) {
      this.refusedKeys.delete(keyFile!);
      return null;
    }
    return message('reason.hosts.keyRefused', { problem });
  }

  status(entry: HostEntry, priority: Priority = 'interactive'): Promise<HostStatusResult> {
    return statusFromSections(entry.name, {
      sections: () => this.runSections(entry, 'status', priority),
      // The status exec already carries ps for its pids.
      ps: (sections) => (sections.ps ? Promise.resolve(sections.ps.out) : Promise.reject(new Error('no ps output'))),
    });
  }

  mem(entry: HostEntry): Promise<HostMemResult> {
    return memFromSections(entry.name, () => this.runSections(entry, 'mem'));
  }

  /** A host as listed; one the ssh config cannot resolve says why instead of failing the list. */
  info(e: HostEntry): HostInfo {
    try {
      const target = this.target(e);
      return { ...hostInfo(e, `${target.user}@${target.host}:${target.port}`), keyTrust: this.keyTrust(e, target) };
    } catch (err) {
      return hostInfo(e, `unresolved: ${errorLine(err)}`);
    }
  }

  /** A connection of its own: the pooled one may be carrying other people's requests. */
  probe(entry: HostEntry): Promise<{ fingerprint: string; connectMs: number }> {
    return this.pool.probe(this.target(entry));
  }

  forget(entry: HostEntry): void {
    try {
      this.pool.drop(this.target(entry));
    } catch {
      /* an ssh config it cannot follow: nothing was pooled for it */
    }
  }

  /** Adds a runtime host (the name checked free by the service), trusting exactly `req.trust` when given. */
  async add(req: HostAddRequest): Promise<{ entry: HostEntry; fingerprint: string | null; message: Message }> {
    const identityFile = req.identityFile ? resolvePath(req.identityFile, process.cwd()) : undefined;
    if (identityFile) {
      const problem = identityProblem(identityFile, this.hasAgent);
      if (problem) throw new MessageError(message('reason.hosts.notAdded', { problem }));
    }
    const draft: HostEntry = { name: req.name, host: req.host, port: req.port, user: req.user, ...(identityFile ? { identityFile } : {}), origin: 'runtime' };
    let fingerprint: string | null = null;
    if (req.trust) {
      // Trust exactly the key the admin read on the host, never whatever is presented right now.
      if (!FINGERPRINT.test(req.trust)) throw new MessageError(message('reason.hosts.notAdded', { problem: message('reason.hosts.trustFormat') }));
      fingerprint = await this.pool.fetchFingerprint(this.target(draft));
      if (fingerprint !== req.trust)
        throw new MessageError(
          message('reason.hosts.notAdded', { problem: message('reason.hosts.otherKey', { name: req.name, fingerprint, expected: req.trust }) }),
        );
    }
    const saved = await this.reg.add({
      name: req.name,
      host: req.host,
      port: req.port,
      user: req.user,
      ...(identityFile ? { identityFile } : {}),
      hostKey: fingerprint,
    });
    if (!fingerprint) {
      try {
        fingerprint = await this.pool.fetchFingerprint(this.target(saved));
      } catch {
        fingerprint = null;
      }
    }
    // Messages and refusals are catalogue messages (reason.*); /gpu hosts renders them in the asker's language.
    const said = req.trust
      ? message('reason.hosts.addedTrusted', { name: req.name, fingerprint: String(fingerprint) })
      : fingerprint
        ? message('reason.hosts.addedUntrusted', { name: req.name, fingerprint })
        : message('reason.hosts.added', { name: req.name });
    return { entry: saved, fingerprint, message: said };
  }

  /**
   * Trusts a host key, but only the one the admin read: `expected` is the fingerprint from the
   * "host key unknown" line (or checked on the host). Without it, nothing is trusted: the answer is
   * the presented fingerprint and how to confirm it. A key that changed since is refused.
   */
  async trust(entry: HostEntry, expected?: string): Promise<{ fingerprint: string; message: Message; trusted: boolean }> {
    if (expected !== undefined && !FINGERPRINT.test(expected)) throw new MessageError(message('reason.hosts.fingerprintFormat'));
    if (entry.pinnedBy === 'config') throw new MessageError(message('reason.hosts.pinnedInConfig', { name: entry.name, key: String(entry.hostKey) }));
    const target = this.target({ ...entry, hostKey: undefined });
    const fingerprint = await this.pool.fetchFingerprint(target);
    const disagreement = this.knownHostsDisagreement(target, fingerprint);
    if (expected === undefined)
      return {
        fingerprint,
        trusted: false,
        message: disagreement.note
          ? message('reason.hosts.presentsNote', { name: entry.name, fingerprint, note: disagreement.note })
          : message('reason.hosts.presents', { name: entry.name, fingerprint }),
      };
    if (fingerprint !== expected) throw new MessageError(message('reason.hosts.keyChanged', { name: entry.name, fingerprint, expected }));
    if (disagreement.revoked) throw new MessageError(message('reason.hosts.revoked', { fingerprint, where: `${target.host}:${target.port}` }));
    const previous = entry.hostKey;
    await this.reg.trust(entry.name, fingerprint);
    this.pool.drop(this.target(entry));
    const said =
      previous && previous !== fingerprint
        ? message(disagreement.note ? 'reason.hosts.trustedNewNote' : 'reason.hosts.trustedNew', {
            name: entry.name,
            fingerprint,
            previous,
            note: disagreement.note,
          })
        : message(disagreement.note ? 'reason.hosts.trustedNote' : 'reason.hosts.trusted', { name: entry.name, fingerprint, note: disagreement.note });
    return { fingerprint, message: said, trusted: true };
  }

  /** Where an SSH host's key is trusted from, as the connection will check it (a pin wins over known_hosts). */
  private keyTrust(e: HostEntry, target: SshTarget): NonNullable<HostInfo['keyTrust']> {
    if (e.hostKey) return e.pinnedBy === 'trust' ? 'trust' : 'config';
    if (this.knownHosts.lookup(target.host, target.port).some((k) => !k.revoked)) return 'known_hosts';
    if (this.knownHosts.certAuthorities(target.host, target.port).length) return 'cert_authority';
    return 'none';
  }

  /** What known_hosts says against this key (`note`, empty when nothing; the messages put it after a semicolon). */
  private knownHostsDisagreement(target: SshTarget, fingerprint: string): { note: Message | ''; revoked: boolean } {
    const known = this.knownHosts.lookup(target.host, target.port);
    const where = target.port === 22 ? target.host : `[${target.host}]:${target.port}`;
    const fps = (revoked: boolean) => [...new Set(known.filter((k) => k.revoked === revoked).map((k) => fingerprintOf(k.blob)))];
    if (fps(true).includes(fingerprint)) return { note: message('reason.hosts.noteRevoked', { fingerprint, where }), revoked: true };
    const listed = fps(false);
    if (listed.length && !listed.includes(fingerprint))
      return {
        note: message('reason.hosts.noteDisagrees', { listed: listed.join(', '), where, name: target.name }),
        revoked: false,
      };
    return { note: '', revoked: false };
  }
}

/**
 * The identity files named in the config, checked when the hosts service is built from it (start of
 * the bot and of every CLI command): each key ssh2 cannot use (passphrase-protected without an agent,
 * not a key) is named with its problem, never its contents. The hosts that would use it are refused
 * with that line; the bot starts with the others.
 */
function checkConfiguredKeys(config: Config, baseDir: string, hasAgent: boolean): Map<string, string> {
  const refused = new Map<string, string>();
  const check = (where: string, file: string) => {
    const path = resolvePath(file, baseDir);
    const p = refused.has(path) ? null : identityProblem(path, hasAgent);
    // The line names where the key is configured, before the problem (the English of both, as the log says it).
    if (p) refused.set(path, `${where}: ${english(p)}`);
  };
  if (config.ssh.identity_file) check('ssh.identity_file', config.ssh.identity_file);
  for (const h of sshHostsOf(config)) if (h.identity_file) check(`hosts.${h.name}.identity_file`, h.identity_file);
  return refused;
}
