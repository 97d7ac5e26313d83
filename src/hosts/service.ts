// HostsService: the registry, the SSH pool and the parsers together. Fan-out is parallel; each host
// is bounded by its own connect + exec timeouts, so a dead host never holds up the others.
import { t } from '../core/i18n.js';
import { scrub } from '../core/secret-scrub.js';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { Config } from '../config.js';
import { sshHostsOf } from '../config.js';
import { ConfigError, resolvePath } from '../core/config.js';
import { PrometheusHosts } from '../sources/prometheus/hosts.js';
import type { Sample } from '../watch/types.js';
import type { HostAddRequest, HostInfo, HostMemResult, HostsService, HostStatusResult, HostTestResult, StatusProgress } from '../core/services.js';
import { identityProblem } from './identity.js';
import { fingerprintOf, KnownHosts } from './known-hosts.js';
import { localContainerSections, localMem, localPs, localStatus } from './local.js';
import { attachPs, hidesPids, parseCgroups, parseMemSection, parsePs, parseStatusSections, splitSections, type PsRow, type Sections } from './parse.js';
import { FINGERPRINT, HOST_NAME, HostRegistry, type HostEntry, type RegistryStore } from './registry.js';
import { MEM_COMMAND, STATUS_COMMAND } from './remote-commands.js';
import { SshConfig, SshConfigError, expandHome, parseJumpChain } from './ssh-config.js';
import { SshError, SshPool, type Priority, type SshTarget } from './ssh-pool.js';

/** Hops a chain of ProxyJumps may take before it is taken for a loop. */
const MAX_JUMP_DEPTH = 8;

export const LOCAL_HOST: HostEntry = { name: 'localhost', host: 'localhost', origin: 'local' };

export interface HostsServiceOptions {
  config: Config;
  baseDir: string;
  /** Override for tests: SSH_AUTH_SOCK by default. */
  agent?: string | null;
  /** The registry's store when it is not SQLite in data_dir (Postgres shared by replicas): built from the config hosts. */
  registry?: (configHosts: HostEntry[]) => RegistryStore;
}

/** A host name as shown back: valid names as they are; anything else cut short and made printable. */
export function displayName(name: unknown): string {
  const s = String(name);
  if (HOST_NAME.test(s)) return s;
  const clean = s.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? clean.slice(0, 40) + '…' : clean;
}

export class SshHostsService implements HostsService {
  /** The registry's store: SQLite in data_dir, or Postgres (see HostsServiceOptions.registry). */
  private readonly reg: RegistryStore;
  /** The SQLite registry (what tests reach into); with Postgres storage, the Postgres one, whose writes return promises. */
  get registry(): HostRegistry {
    return this.reg as HostRegistry;
  }
  readonly pool: SshPool;
  private sshConfig: SshConfig;
  private config: Config;
  private baseDir: string;
  private knownHosts: KnownHosts;
  private hasAgent: boolean;
  /** Hosts of `source: prometheus` groups: read from Prometheus, never over SSH. */
  readonly prometheus: PrometheusHosts | null;
  /** Identity files of the config the bot cannot use (resolved path -> the line naming it), checked again before each use. */
  private refusedKeys: Map<string, string>;

  constructor(opts: HostsServiceOptions) {
    const { config, baseDir } = opts;
    this.config = config;
    this.baseDir = baseDir;
    const agent = opts.agent === undefined ? process.env.SSH_AUTH_SOCK : opts.agent;
    this.hasAgent = Boolean(agent);
    // A key the bot cannot use refuses the hosts that would use it, each with one line; the others start.
    this.refusedKeys = checkConfiguredKeys(config, baseDir, this.hasAgent);
    for (const problem of new Set(this.refusedKeys.values())) process.stderr.write(`hosts: ${t('en', 'reason.hosts.keyRefused', { problem })}\n`);
    try {
      this.prometheus = PrometheusHosts.fromConfig(config.host_groups.flatMap((g) => (g.source === 'prometheus' ? [g] : [])));
    } catch (e) {
      throw new ConfigError(`config is not valid:\n  ${(e as Error).message}`);
    }
    const configHosts = sshHostsOf(config).map((h): HostEntry => ({
      name: h.name,
      host: h.host,
      ...(h.port ? { port: h.port } : {}),
      ...(h.user ? { user: h.user } : {}),
      ...(h.identity_file ? { identityFile: resolvePath(h.identity_file, baseDir) } : {}),
      ...(h.host_key ? { hostKey: h.host_key } : {}),
      origin: 'config' as const,
    }));
    this.reg = opts.registry ? opts.registry(configHosts) : new HostRegistry(resolvePath(config.data_dir, baseDir), configHosts);
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

  async close(): Promise<void> {
    await this.pool.close();
    await this.reg.close();
  }

  private allHosts(): HostEntry[] {
    const hosts = [...this.reg.list(), ...(this.prometheus?.names() ?? []).map(promEntry)];
    return hosts.length ? hosts : [LOCAL_HOST];
  }

  private lookup(name: string): HostEntry | null {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) return null;
    if (this.prometheus?.has(name)) return promEntry(name);
    const all = this.reg.list();
    if (all.length === 0 && !this.prometheus && name === 'localhost') return LOCAL_HOST;
    return this.reg.get(name);
  }

  private isProm(entry: HostEntry): boolean {
    return entry.origin === 'config' && this.prometheus?.has(entry.name) === true;
  }

  /**
   * History of the Prometheus hosts over [startMs, endMs] as watch samples (query_range), for the leak
   * watch to start with what Prometheus already holds. Empty without Prometheus groups.
   */
  async history(startMs: number, endMs: number): Promise<{ samples: Sample[]; warnings: string[] }> {
    return this.prometheus ? this.prometheus.history(startMs, endMs) : { samples: [], warnings: [] };
  }

  /** The hosts named (deduplicated, unknown ones as null), or every host. */
  private pick(names: string[]): { name: string; entry: HostEntry | null }[] {
    if (!names.length) return this.allHosts().map((e) => ({ name: e.name, entry: e }));
    const seen = new Set<string>();
    const out: { name: string; entry: HostEntry | null }[] = [];
    for (const n of names.slice(0, 256)) {
      const key = String(n);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ name: displayName(key), entry: this.lookup(key) });
    }
    return out;
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

  private async runSections(entry: HostEntry, command: 'status' | 'mem', priority: Priority = 'interactive'): Promise<Sections> {
    const timeout = this.config.ssh.exec_timeout_ms;
    if (entry.origin === 'local') return command === 'status' ? localStatus(timeout) : localMem(timeout);
    const target = this.target(entry);
    const refused = this.keyRefusal(target);
    if (refused) throw new SshError(refused, 'auth');
    const r = await this.pool.exec(target, command === 'status' ? STATUS_COMMAND : MEM_COMMAND, { priority });
    return splitSections(r.stdout);
  }

  /** The line refusing a host whose identity file the start-up check refused, unless the file is usable by now. */
  private keyRefusal(target: SshTarget): string | null {
    const keyFile = target.identityFile ?? (this.config.ssh.identity_file ? resolvePath(this.config.ssh.identity_file, this.baseDir) : undefined);
    const problem = keyFile === undefined ? undefined : this.refusedKeys.get(keyFile);
    if (problem === undefined) return null;
    // Fixed since (a key without its passphrase put in place, an agent): used from now on.
    if (identityProblem(keyFile!, this.hasAgent) === null) {
      this.refusedKeys.delete(keyFile!);
      return null;
    }
    return t('en', 'reason.hosts.keyRefused', { problem });
  }

  /** ps output for these pids: the status exec already carries it for SSH hosts; localhost runs ps. */
  private async psText(entry: HostEntry, sections: Sections, pids: number[]): Promise<string> {
    if (sections.ps) return sections.ps.out;
    if (entry.origin === 'local') return (await localPs(pids, this.config.ssh.exec_timeout_ms)).out;
    throw new Error('no ps output');
  }

  private async statusOne(name: string, entry: HostEntry | null, priority: Priority = 'interactive'): Promise<HostStatusResult> {
    if (!entry) return { name, ok: false, error: t('en', 'reason.hosts.unknown') };
    if (this.isProm(entry)) return this.prometheus!.status(entry.name);
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const sections = await this.runSections(entry, 'status', priority);
      const parsed = parseStatusSections(sections);
      if ('error' in parsed) return { name, ok: false, elapsedMs: ms(), error: parsed.error };
      const pids = [...new Set(parsed.processes.map((p) => p.pid))].slice(0, 512);
      let ps = new Map<number, PsRow>();
      let warning = parsed.warning;
      if (pids.length) {
        try {
          ps = parsePs(await this.psText(entry, sections, pids));
        } catch (e) {
          warning = `process owners unavailable: ${(e as Error).message}`;
        }
      }
      // localhost reads /proc itself; an SSH host's status command printed these sections.
      const host = entry.origin === 'local' && pids.length ? await localContainerSections(pids) : sections;
      const memory = parseMemSection(sections.free);
      return {
        name,
        ok: true,
        elapsedMs: ms(),
        gpus: parsed.gpus,
        processes: attachPs(parsed.processes, ps, Date.now(), { containers: parseCgroups(host.cgroup?.out ?? ''), hidepid: hidesPids(host.proc) }),
        ...('error' in memory ? {} : { memory }),
        ...(warning ? { warning } : {}),
      };
    } catch (e) {
      return { name, ok: false, elapsedMs: ms(), error: errorLine(e) };
    }
  }

  private async memOne(name: string, entry: HostEntry | null): Promise<HostMemResult> {
    if (!entry) return { name, ok: false, error: t('en', 'reason.hosts.unknown') };
    if (this.isProm(entry)) return this.prometheus!.mem(entry.name);
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const memory = parseMemSection((await this.runSections(entry, 'mem')).free);
      if ('error' in memory) return { name, ok: false, elapsedMs: ms(), error: memory.error };
      return { name, ok: true, elapsedMs: ms(), memory };
    } catch (e) {
      return { name, ok: false, elapsedMs: ms(), error: errorLine(e) };
    }
  }

  /** Last outcome per host ("ok" or its one-line error), for /healthz. */
  private lastState = new Map<string, string>();
  /** Called after every host query (for metrics); set by the bot when it runs with /metrics. */
  onResult?: (host: string, seconds: number, ok: boolean) => void;

  private record<R extends { name: string; ok: boolean; elapsedMs?: number; error?: string; warning?: string }>(r: R, known: boolean): R {
    // Any source's error text may echo a credential (a proxy quoting the Authorization header): scrubbed before it is shown or logged.
    if (r.error) r = { ...r, error: scrub(r.error) };
    if (r.warning) r = { ...r, warning: scrub(r.warning) };
    if (!known) return r;
    this.lastState.set(r.name, r.ok ? 'ok' : (r.error ?? 'error'));
    this.onResult?.(r.name, (r.elapsedMs ?? 0) / 1000, r.ok);
    return r;
  }

  hostStates(): Record<string, string> {
    return Object.fromEntries(this.allHosts().map((e) => [e.name, this.lastState.get(e.name) ?? 'not queried yet']));
  }

  /** Runs `f` once the registry holds what other replicas wrote (at once for SQLite, read directly). */
  private fresh<T>(f: () => Promise<T>): Promise<T> {
    return this.reg.refresh ? this.reg.refresh().then(f) : f();
  }

  status(names: string[], onProgress?: StatusProgress): Promise<HostStatusResult[]> {
    return this.fresh(() => this.statusNow(names, onProgress));
  }

  private statusNow(names: string[], onProgress?: StatusProgress): Promise<HostStatusResult[]> {
    const picked = this.pick(names);
    const asked = picked.map((p) => p.name);
    const answered: HostStatusResult[] = [];
    // A caller's progress callback must never break the fan-out it watches.
    const report = () => {
      try {
        onProgress?.(answered, asked);
      } catch {
        /* progress is best effort */
      }
    };
    report();
    return Promise.all(
      picked.map(async ({ name, entry }) => {
        const r = this.record(await this.statusOne(name, entry), entry !== null);
        answered.push(r);
        report();
        return r;
      }),
    );
  }

  /**
   * The leak-watch sampler's poll: the same as status, at background priority (its own connect
   * budget, channels after chat requests), so chat requests never queue behind it.
   */
  statusInBackground(names: string[]): Promise<HostStatusResult[]> {
    return this.fresh(() => this.statusInBackgroundNow(names));
  }

  private statusInBackgroundNow(names: string[]): Promise<HostStatusResult[]> {
    return Promise.all(this.pick(names).map(async ({ name, entry }) => this.record(await this.statusOne(name, entry, 'background'), entry !== null)));
  }

  mem(names: string[]): Promise<HostMemResult[]> {
    return this.fresh(() => this.memNow(names));
  }

  private memNow(names: string[]): Promise<HostMemResult[]> {
    return Promise.all(this.pick(names).map(async ({ name, entry }) => this.record(await this.memOne(name, entry), entry !== null)));
  }

  list(): Promise<HostInfo[]> {
    return this.fresh(() => Promise.resolve(this.allHosts().map((e) => this.infoOf(e))));
  }

  /** A host as listed; one the ssh config cannot resolve says why instead of failing the list. */
  private infoOf(e: HostEntry): HostInfo {
    if (e.origin === 'local') return info(e, null);
    if (this.isProm(e)) return { ...info(e, null), target: this.prometheus!.describe(e.name) };
    try {
      const target = this.target(e);
      return { ...info(e, target), keyTrust: this.keyTrust(e, target) };
    } catch (err) {
      return { ...info(e, null), target: `unresolved: ${errorLine(err)}` };
    }
  }

  async add(req: HostAddRequest): Promise<{ host: HostInfo; fingerprint: string | null; message: string }> {
    if (!HOST_NAME.test(req.name)) throw new Error(t('en', 'reason.hosts.badName'));
    await this.reg.refresh?.();
    if (this.reg.get(req.name) || this.prometheus?.has(req.name)) throw new Error(t('en', 'reason.hosts.exists', { name: req.name }));
    const identityFile = req.identityFile ? resolvePath(req.identityFile, process.cwd()) : undefined;
    if (identityFile) {
      const problem = identityProblem(identityFile, this.hasAgent);
      if (problem) throw new Error(t('en', 'reason.hosts.notAdded', { problem }));
    }
    const draft: HostEntry = { name: req.name, host: req.host, port: req.port, user: req.user, ...(identityFile ? { identityFile } : {}), origin: 'runtime' };
    let fingerprint: string | null = null;
    if (req.trust) {
      // Trust exactly the key the admin read on the host, never whatever is presented right now.
      if (!FINGERPRINT.test(req.trust)) throw new Error(t('en', 'reason.hosts.notAdded', { problem: t('en', 'reason.hosts.trustFormat') }));
      fingerprint = await this.pool.fetchFingerprint(this.target(draft));
      if (fingerprint !== req.trust)
        throw new Error(t('en', 'reason.hosts.notAdded', { problem: t('en', 'reason.hosts.otherKey', { name: req.name, fingerprint, expected: req.trust }) }));
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
    // Messages and refusals are made in English (reason.*); /gpu hosts shows them in the asker's language.
    const message = req.trust
      ? t('en', 'reason.hosts.addedTrusted', { name: req.name, fingerprint: String(fingerprint) })
      : fingerprint
        ? t('en', 'reason.hosts.addedUntrusted', { name: req.name, fingerprint })
        : t('en', 'reason.hosts.added', { name: req.name });
    return { host: this.infoOf(saved), fingerprint, message };
  }

  remove(name: string): Promise<boolean> {
    return this.fresh(() => this.removeNow(name));
  }

  private removeNow(name: string): Promise<boolean> {
    const entry = this.lookup(name);
    if (!entry) return Promise.resolve(false);
    try {
      this.pool.drop(this.target(entry));
    } catch {
      /* an ssh config it cannot follow: nothing was pooled for it */
    }
    return Promise.resolve(this.reg.remove(name));
  }

  async test(name: string): Promise<HostTestResult> {
    await this.reg.refresh?.();
    const entry = this.lookup(name);
    if (!entry) return { name: displayName(name), ok: false, steps: [{ step: 'lookup', ok: false, ms: 0, detail: 'unknown host' }] };
    const steps: HostTestResult['steps'] = [];
    let fingerprint: string | null = null;
    const step = async <T>(label: string, f: () => Promise<T>, detail?: (t: T) => string | undefined): Promise<T | null> => {
      const t0 = performance.now();
      try {
        const r = await f();
        const d = detail?.(r);
        steps.push({ step: label, ok: true, ms: Math.round(performance.now() - t0), ...(d ? { detail: d } : {}) });
        return r;
      } catch (e) {
        if (e instanceof SshError && e.fingerprint) fingerprint = e.fingerprint;
        steps.push({ step: label, ok: false, ms: Math.round(performance.now() - t0), detail: errorLine(e) });
        return null;
      }
    };
    if (entry.origin !== 'local' && !this.isProm(entry)) {
      // A connection of its own: the pooled one may be carrying other people's requests.
      const target = this.target(entry);
      const c = await step(
        'connect',
        () => this.pool.probe(target),
        (r) => `host key ${r.fingerprint}`,
      );
      if (!c) return { name: entry.name, ok: false, fingerprint, steps };
      fingerprint = c.fingerprint;
    }
    const s = await step(
      'nvidia-smi',
      () => this.statusOne(entry.name, entry),
      (r) => (r.ok ? `${r.gpus.length} GPU(s), ${r.processes.length} process(es)` : undefined),
    );
    if (s && !s.ok) {
      steps[steps.length - 1].ok = false;
      steps[steps.length - 1].detail = s.error;
    }
    const m = await step(
      'free',
      () => this.memOne(entry.name, entry),
      (r) => (r.ok ? `${Math.round(r.memory.totalBytes / 2 ** 30)} GiB RAM` : undefined),
    );
    if (m && !m.ok) {
      steps[steps.length - 1].ok = false;
      steps[steps.length - 1].detail = m.error;
    }
    return { name: entry.name, ok: steps.every((s) => s.ok), fingerprint, steps };
  }

  /**
   * Trusts a host key, but only the one the admin read: `expected` is the fingerprint from the
   * "host key unknown" line (or checked on the host). Without it, nothing is trusted: the answer is
   * the presented fingerprint and how to confirm it. A key that changed since is refused.
   */
  async trust(name: string, expected?: string): Promise<{ fingerprint: string; message: string; trusted: boolean }> {
    await this.reg.refresh?.();
    const entry = this.lookup(name);
    if (!entry) throw new Error(t('en', 'reason.hosts.unknown'));
    if (entry.origin === 'local') throw new Error(t('en', 'reason.hosts.localTrust'));
    if (this.isProm(entry)) throw new Error(t('en', 'reason.hosts.promTrust', { name: entry.name }));
    if (expected !== undefined && !FINGERPRINT.test(expected)) throw new Error(t('en', 'reason.hosts.fingerprintFormat'));
    if (entry.pinnedBy === 'config') throw new Error(t('en', 'reason.hosts.pinnedInConfig', { name: entry.name, key: String(entry.hostKey) }));
    const target = this.target({ ...entry, hostKey: undefined });
    const fingerprint = await this.pool.fetchFingerprint(target);
    const disagreement = this.knownHostsDisagreement(target, fingerprint);
    if (expected === undefined)
      return {
        fingerprint,
        trusted: false,
        message: disagreement.note
          ? t('en', 'reason.hosts.presentsNote', { name: entry.name, fingerprint, note: disagreement.note })
          : t('en', 'reason.hosts.presents', { name: entry.name, fingerprint }),
      };
    if (fingerprint !== expected) throw new Error(t('en', 'reason.hosts.keyChanged', { name: entry.name, fingerprint, expected }));
    if (disagreement.revoked) throw new Error(t('en', 'reason.hosts.revoked', { fingerprint, where: `${target.host}:${target.port}` }));
    const previous = entry.hostKey;
    await this.reg.trust(entry.name, fingerprint);
    this.pool.drop(this.target(entry));
    const message =
      previous && previous !== fingerprint
        ? t('en', disagreement.note ? 'reason.hosts.trustedNewNote' : 'reason.hosts.trustedNew', {
            name: entry.name,
            fingerprint,
            previous,
            note: disagreement.note,
          })
        : t('en', disagreement.note ? 'reason.hosts.trustedNote' : 'reason.hosts.trusted', { name: entry.name, fingerprint, note: disagreement.note });
    return { fingerprint, message, trusted: true };
  }

  /** Where an SSH host's key is trusted from, as the connection will check it (a pin wins over known_hosts). */
  private keyTrust(e: HostEntry, target: SshTarget): NonNullable<HostInfo['keyTrust']> {
    if (e.hostKey) return e.pinnedBy === 'trust' ? 'trust' : 'config';
    if (this.knownHosts.lookup(target.host, target.port).some((k) => !k.revoked)) return 'known_hosts';
    if (this.knownHosts.certAuthorities(target.host, target.port).length) return 'cert_authority';
    return 'none';
  }

  /** What known_hosts says about this host when it does not list exactly this key. */
  /** What known_hosts says against this key (`note`, empty when nothing; the messages put it after a semicolon). */
  private knownHostsDisagreement(target: SshTarget, fingerprint: string): { note: string; revoked: boolean } {
    const known = this.knownHosts.lookup(target.host, target.port);
    const where = target.port === 22 ? target.host : `[${target.host}]:${target.port}`;
    const fps = (revoked: boolean) => [...new Set(known.filter((k) => k.revoked === revoked).map((k) => fingerprintOf(k.blob)))];
    if (fps(true).includes(fingerprint)) return { note: t('en', 'reason.hosts.noteRevoked', { fingerprint, where }), revoked: true };
    const listed = fps(false);
    if (listed.length && !listed.includes(fingerprint))
      return {
        note: t('en', 'reason.hosts.noteDisagrees', { listed: listed.join(', '), where, name: target.name }),
        revoked: false,
      };
    return { note: '', revoked: false };
  }
}

/** A Prometheus host as a registry-shaped entry (its name is all the rest of the service uses). */
const promEntry = (name: string): HostEntry => ({ name, host: name, origin: 'config' });

function info(e: HostEntry, t: SshTarget | null): HostInfo {
  return { name: e.name, target: t ? `${t.user}@${t.host}:${t.port}` : 'local', origin: e.origin, hostKey: e.hostKey ?? null };
}

export function errorLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split('\n')[0].slice(0, 300);
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
    if (p) refused.set(path, `${where}: ${p}`);
  };
  if (config.ssh.identity_file) check('ssh.identity_file', config.ssh.identity_file);
  for (const h of sshHostsOf(config)) if (h.identity_file) check(`hosts.${h.name}.identity_file`, h.identity_file);
  return refused;
}

export function createHostsService(config: Config, baseDir: string, registry?: HostsServiceOptions['registry']): SshHostsService {
  return new SshHostsService({ config, baseDir, ...(registry ? { registry } : {}) });
}
