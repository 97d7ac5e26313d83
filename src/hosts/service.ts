// The hosts service: the registry and the host sources together. Each host is answered by its
// source (SSH, localhost, or a host group's own source: see group-sources.ts), all
// at once; the service knows no source's details. Fan-out is parallel and each source bounds its hosts.
import { message, MessageError, type Message } from '../core/message.js';
import { scrub, scrubDeep } from '../core/secret-scrub.js';
import type { Config } from '../config.js';
import { sshHostsOf } from '../config.js';
import { resolvePath } from '../core/config.js';
import type { HostAddRequest, HostInfo, HostMemResult, HostsService, HostStatusResult, HostTestResult, StatusProgress } from '../core/services.js';
import { groupSources } from './group-sources.js';
import { LOCAL_HOST, LocalHostSource } from './local.js';
import { HOST_NAME, type HostEntry, type RegistryStore } from './registry.js';
import type { HostRegistry } from '../storage/sqlite/registry.js';
import { errorLine, hostFailure, type HistoryStore, type HostSource, type Priority } from './source.js';
import { SshHostSource } from './ssh-source.js';

export { LOCAL_HOST } from './local.js';
export { errorLine } from './source.js';

export interface HostsServiceOptions {
  config: Config;
  baseDir: string;
  /** Override for tests: SSH_AUTH_SOCK by default. */
  agent?: string | null;
  /** The registry's store, built from the config hosts: the backend src/app.ts chose (SQLite in data_dir, or Postgres shared by replicas). */
  registry: (configHosts: HostEntry[]) => RegistryStore;
}

/** A host name as shown back: valid names as they are; anything else cut short and made printable. */
export function displayName(name: unknown): string {
  const s = String(name);
  if (HOST_NAME.test(s)) return s;
  const clean = s.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? clean.slice(0, 40) + '…' : clean;
}

export class SourcedHostsService implements HostsService {
  /** The registry's store (see HostsServiceOptions.registry). */
  private readonly reg: RegistryStore;
  /** The SQLite registry (what tests reach into); with Postgres storage, the Postgres one, whose writes return promises. */
  get registry(): HostRegistry {
    return this.reg as HostRegistry;
  }
  /** The registry's hosts' source: every host of the registry is an SSH host. */
  readonly ssh: SshHostSource;
  private readonly local: LocalHostSource;
  /** The host groups' sources that list their own hosts, by host name (fixed by the config). */
  private readonly listed = new Map<string, HostSource>();
  private readonly sources: HostSource[];

  constructor(opts: HostsServiceOptions) {
    const { config, baseDir } = opts;
    const grouped = groupSources(config);
    for (const source of grouped) for (const name of source.names?.() ?? []) this.listed.set(name, source);
    const configHosts = sshHostsOf(config).map((h): HostEntry => ({
      name: h.name,
      host: h.host,
      ...(h.port ? { port: h.port } : {}),
      ...(h.user ? { user: h.user } : {}),
      ...(h.identity_file ? { identityFile: resolvePath(h.identity_file, baseDir) } : {}),
      ...(h.host_key ? { hostKey: h.host_key } : {}),
      origin: 'config' as const,
    }));
    this.reg = opts.registry(configHosts);
    const agent = opts.agent === undefined ? process.env.SSH_AUTH_SOCK : opts.agent;
    this.ssh = new SshHostSource({ config, baseDir, agent, registry: this.reg });
    this.local = new LocalHostSource(config.ssh.exec_timeout_ms);
    this.sources = [this.ssh, this.local, ...grouped];
  }

  async close(): Promise<void> {
    for (const source of this.sources) await source.close();
    await this.reg.close();
  }

  /** A host of a group's own list, as a registry-shaped entry (its name is all the rest of the service uses). */
  private static listedEntry(name: string): HostEntry {
    return { name, host: name, origin: 'config' };
  }

  private allHosts(): HostEntry[] {
    const hosts = [...this.reg.list(), ...[...this.listed.keys()].map((name) => SourcedHostsService.listedEntry(name))];
    return hosts.length ? hosts : [LOCAL_HOST];
  }

  private lookup(name: string): HostEntry | null {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) return null;
    if (this.listed.has(name)) return SourcedHostsService.listedEntry(name);
    const all = this.reg.list();
    if (all.length === 0 && this.listed.size === 0 && name === 'localhost') return LOCAL_HOST;
    return this.reg.get(name);
  }

  /** The source answering for a host: localhost, its group's own source, else SSH (the registry's hosts). */
  sourceOf(entry: HostEntry): HostSource {
    if (entry.origin === 'local') return this.local;
    return (entry.origin === 'config' ? this.listed.get(entry.name) : undefined) ?? this.ssh;
  }

  /**
   * The leak watch's start: each source that keeps history fills the store since its last
   * sample, before the first digest. A source that fails is its warning lines, never the start's.
   */
  async backfillHistory(store: HistoryStore, now = Date.now()): Promise<{ samples: number; warnings: string[] }> {
    let samples = 0;
    const warnings: string[] = [];
    for (const source of this.sources) {
      if (!source.backfill) continue;
      const filled = await source.backfill(store, now).catch((e: unknown) => ({ samples: 0, warnings: [(e as Error).message ?? String(e)] }));
      samples += filled.samples;
      for (const w of filled.warnings) warnings.push(`${source.label} history: ${w}`);
    }
    return { samples, warnings };
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

  private statusOne(name: string, entry: HostEntry | null, priority: Priority = 'interactive'): Promise<HostStatusResult> {
    if (!entry) return Promise.resolve(hostFailure(name, message('reason.hosts.unknown')));
    return this.sourceOf(entry).status(entry, priority);
  }

  private memOne(name: string, entry: HostEntry | null): Promise<HostMemResult> {
    if (!entry) return Promise.resolve(hostFailure(name, message('reason.hosts.unknown')));
    return this.sourceOf(entry).mem(entry);
  }

  /** Last outcome per host ("ok" or its one-line error), for /healthz. */
  private lastState = new Map<string, string>();
  /** Called after every host query (for metrics); set by the bot when it runs with /metrics. */
  onResult?: (host: string, seconds: number, ok: boolean) => void;

  private record<R extends { name: string; ok: boolean; elapsedMs?: number; error?: string; warning?: string; problems?: unknown[] }>(r: R, known: boolean): R {
    // Any source's error text may echo a credential (a proxy quoting the Authorization header): scrubbed before it is shown or logged.
    if (r.error) r = { ...r, error: scrub(r.error) };
    if (r.warning) r = { ...r, warning: scrub(r.warning) };
    if (r.problems) r = { ...r, problems: scrubDeep(r.problems) };
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

  /** A host as listed; a source that cannot resolve it says why instead of failing the list. */
  private infoOf(e: HostEntry): HostInfo {
    return this.sourceOf(e).info(e);
  }

  async add(req: HostAddRequest): Promise<{ host: HostInfo; fingerprint: string | null; message: Message }> {
    if (!HOST_NAME.test(req.name)) throw new MessageError(message('reason.hosts.badName'));
    await this.reg.refresh?.();
    if (this.reg.get(req.name) || this.listed.has(req.name)) throw new MessageError(message('reason.hosts.exists', { name: req.name }));
    // Hosts added at run time are SSH hosts of the registry.
    const added = await this.ssh.add(req);
    return { host: this.infoOf(added.entry), fingerprint: added.fingerprint, message: added.message };
  }

  remove(name: string): Promise<boolean> {
    return this.fresh(() => this.removeNow(name));
  }

  private removeNow(name: string): Promise<boolean> {
    const entry = this.lookup(name);
    if (!entry) return Promise.resolve(false);
    this.sourceOf(entry).forget?.(entry);
    return Promise.resolve(this.reg.remove(name));
  }

  async test(name: string): Promise<HostTestResult> {
    await this.reg.refresh?.();
    const entry = this.lookup(name);
    if (!entry) return { name: displayName(name), ok: false, steps: [{ step: 'lookup', ok: false, ms: 0, detail: 'unknown host' }] };
    const source = this.sourceOf(entry);
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
        // A refused host key names the key presented (SshError.fingerprint).
        const presented = (e as { fingerprint?: unknown } | null)?.fingerprint;
        if (typeof presented === 'string' && presented) fingerprint = presented;
        steps.push({ step: label, ok: false, ms: Math.round(performance.now() - t0), detail: errorLine(e) });
        return null;
      }
    };
    if (source.probe) {
      const probe = source.probe.bind(source);
      const c = await step(
        'connect',
        () => probe(entry),
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
   * Trusts a host key, but only the one the admin read (see SshHostSource.trust); a source without
   * host keys refuses with its own line.
   */
  async trust(name: string, expected?: string): Promise<{ fingerprint: string; message: Message; trusted: boolean }> {
    await this.reg.refresh?.();
    const entry = this.lookup(name);
    if (!entry) throw new MessageError(message('reason.hosts.unknown'));
    return this.sourceOf(entry).trust(entry, expected);
  }
}

export function createHostsService(config: Config, baseDir: string, registry: HostsServiceOptions['registry']): SourcedHostsService {
  return new SourcedHostsService({ config, baseDir, registry });
}
