// What commands may use, as interfaces. Implementations (SSH pool, SQLite store, leak watch) live in
// src/hosts and src/watch and are wired in src/app.ts, so commands never import an SSH or chat library.
// The core names no wing (issue 24 §4): the diagnosis rules (`rules`) and the owners service (`owners`)
// join `Services` from their own folders, by declaration merging (src/diagnose/rule-base.ts,
// src/owners/directory.ts).
import type { Text } from './message.js';
import type { ChatPlatform } from './platform.js';

export interface GpuStatus {
  index: number;
  uuid: string | null;
  name: string | null;
  memoryUsedMiB: number | null;
  memoryTotalMiB: number | null;
  utilizationPct: number | null;
  temperatureC: number | null;
  error?: string | null;
  /** Power, ECC, pending retirements / remaps, clock reasons and the last Xid, where the source reports them. */
  health?: GpuHealthStatus;
  /** The GPU's MIG instances, where MIG is on and the source lists them. */
  mig?: MigInstanceStatus[];
}

/** One MIG device: its GPU instance, compute instance, device index, profile (3g.40gb) and memory. */
export interface MigInstanceStatus {
  gi: number | null;
  ci: number | null;
  device: number | null;
  profile: string | null;
  memoryUsedMiB: number | null;
  memoryTotalMiB: number | null;
}

/** The shape of src/readings' GpuHealth (the core imports no wing); clock reasons are NVML's reason keys. */
export interface GpuHealthStatus {
  powerDrawW: number | null;
  powerLimitW: number | null;
  eccUncorrectedVolatile: number | null;
  retiredPagesPending: boolean | null;
  remappedRowsPending: boolean | null;
  remappedRowsFailure: boolean | null;
  clockReasons: string[] | null;
  lastXid?: number | null;
}

export interface GpuProcessStatus {
  gpuIndex: number | null;
  pid: number;
  /** null when the pid is not visible on the host (a container's own pid namespace). */
  user: string | null;
  memoryMiB: number | null;
  command: string | null;
  startedAt?: string | null;
  elapsedSeconds?: number | null;
  /** ps's %CPU: CPU time over run time (a lifetime average). */
  cpuPct?: number | null;
  /** Host resident memory (ps rss), bytes. */
  rssBytes?: number | null;
  /** The MIG GPU / compute instance the process runs on, where MIG is on. */
  gi?: number | null;
  ci?: number | null;
}

/**
 * What a host's answer says besides its figures, for the reply: its warnings (an ok answer) or its error's
 * parts (a failure), each a catalogue message or a source's own words, rendered in the asker's language.
 * `warning` and `error` are the same in English, joined by '; ' (logs, JSON output, the watch, /healthz).
 */
export interface HostProblems {
  problems?: Text[];
}

export type HostStatusResult =
  | ({ name: string; ok: true; elapsedMs: number; gpus: GpuStatus[]; processes: GpuProcessStatus[]; memory?: HostMemory; warning?: string } & HostProblems)
  | ({ name: string; ok: false; elapsedMs?: number; error: string } & HostProblems);

export interface HostMemory {
  totalBytes: number;
  usedBytes: number | null;
  availableBytes: number | null;
  swapTotalBytes: number | null;
  swapUsedBytes: number | null;
}

export type HostMemResult =
  | ({ name: string; ok: true; elapsedMs: number; memory: HostMemory; warning?: string; mig?: HostMigMemory[] } & HostProblems)
  | ({ name: string; ok: false; elapsedMs?: number; error: string } & HostProblems);

/** A GPU's MIG instances as `mem` lists them (where MIG is on). */
export interface HostMigMemory {
  gpuIndex: number;
  instances: MigInstanceStatus[];
}

export interface HostInfo {
  name: string;
  /** user@host:port, or "local" for the built-in localhost without SSH. */
  target: string;
  origin: 'config' | 'runtime' | 'local';
  hostKey?: string | null;
  /** Where the host key is trusted from: a pin in the config, a trust made in chat, known_hosts (a key or an
   * @cert-authority), or nowhere (the first connection will be refused). Absent for local and Prometheus hosts. */
  keyTrust?: 'config' | 'trust' | 'known_hosts' | 'cert_authority' | 'none';
}

export interface HostAddRequest {
  name: string;
  user: string;
  host: string;
  port: number;
  identityFile?: string;
  /** Trust the host key only if it has this fingerprint (the one the admin read on the host). */
  trust?: string;
}

export interface HostTestResult {
  name: string;
  ok: boolean;
  fingerprint?: string | null;
  steps: { step: string; ok: boolean; ms: number; detail?: string }[];
}

/** Where a fan-out stands: called once when it starts (nothing answered yet), then after each host; `asked` is every host, in order. */
export type StatusProgress = (answered: readonly HostStatusResult[], asked: readonly string[]) => void;

export interface HostsService {
  status(names: string[], onProgress?: StatusProgress): Promise<HostStatusResult[]>;
  /** The same at background priority (the leak-watch sampler): chat requests never queue behind it. */
  statusInBackground?(names: string[]): Promise<HostStatusResult[]>;
  mem(names: string[]): Promise<HostMemResult[]>;
  list(): Promise<HostInfo[]>;
  add(request: HostAddRequest): Promise<{ host: HostInfo; fingerprint: string | null; message: Text }>;
  remove(name: string): Promise<boolean>;
  test(name: string): Promise<HostTestResult>;
  /** Trusts only `fingerprint` (what the admin read); without it, answers with the presented key, trusting nothing. */
  trust(name: string, fingerprint?: string): Promise<{ fingerprint: string; message: Text; trusted?: boolean }>;
}

export interface Services {
  hosts?: HostsService;
  /** Leak watch: filled in by src/watch when it is configured. */
  watch?: WatchService;
  /** `/gpu fit` and `/gpu notify` settings from the config (defaults when unset). */
  fit?: FitConfig;
  /** 👍 / 👎 on diagnoses and the logs kept for admins (src/feedback/storage.ts). */
  feedback?: import('./feedback.js').FeedbackService;
  /** Scheduled posts outside the leak watch (`feedback.weekly` with watch off): the adapters give it their poster. */
  schedules?: { setPoster(post: (target: PostTarget, reply: import('./reply.js').Reply) => Promise<void>): unknown };
}

/** The config's `fit` and `notify` sections, as the commands and the notify check use them. */
export interface FitConfig {
  marginMiB: number;
  marginPct: number;
  maxNotifyPerUser: number;
}

/** Where a message goes: a channel (digests) or one user's direct messages (`kind: 'dm'`, channel = user id). */
export interface PostTarget {
  platform: ChatPlatform;
  channel: string;
  name: string;
  kind?: 'channel' | 'dm';
}

/** A `/gpu notify` subscription as its owner sees it. */
export interface NotifySubscription {
  id: number;
  sizeMiB: number;
  /** As the user wrote it (40G). */
  size: string;
  count: number;
  shared: boolean;
  createdMs: number;
  expiresMs: number;
}

export interface NotifyService {
  subscribe(
    request: { platform: string; userId: string; sizeMiB: number; size: string; count: number; shared: boolean; hours: number },
    now?: number,
  ): Promise<{ ok: true; subscription: NotifySubscription } | { ok: false; reason: import('./message.js').Message; open: NotifySubscription[] }>;
  list(platform: string, userId: string): Promise<NotifySubscription[]>;
  /** Only the owner's own open subscription; false for anything else. */
  cancel(platform: string, userId: string, id: number): Promise<boolean>;
}

export interface ChartRequestOptions {
  host: string;
  /** GPU index; none: the GPU with a creep, else the one holding the most; 'all': every GPU of the host, a panel each. */
  gpu?: number | 'all';
  hours: number;
  theme?: 'light' | 'dark';
  /** Where the chart is asked for: its digest's time zone labels the time axis. */
  platform?: string;
  channel?: string;
  /** The reply's language (the chart image's labels stay English). */
  locale?: import('./i18n.js').Locale;
}

/** A growth rate the leak watch measured for one process (its creep findings), as `/gpu fit` weighs it. */
export interface GpuGrowth {
  host: string;
  gpu: number;
  mibPerHour: number;
  /** The growing process; growth of a process no longer on the GPU does not count. */
  pid?: number;
  user?: string;
}

export interface WatchService {
  /** `locale`: the reply's language (English when unset). */
  digestNow(locale?: import('./i18n.js').Locale): Promise<import('./reply.js').Reply>;
  watchHost(name: string, locale?: import('./i18n.js').Locale): Promise<import('./reply.js').Reply>;
  /** A PNG chart of one GPU's recent memory (`/gpu chart`). */
  chartHost(request: ChartRequestOptions): Promise<import('./reply.js').Reply>;
  /** Where scheduled digests go; the chat adapters set it once they are connected. */
  setPoster?(post: (target: PostTarget, reply: import('./reply.js').Reply) => Promise<void>): void;
  /** Growth rates (MiB/h) of growing GPU processes from the leak watch's findings, for `/gpu fit`. */
  gpuGrowth?(): Promise<GpuGrowth[]>;
  /** `/gpu notify` subscriptions, checked after every sampler round. */
  notify?: NotifyService;
}
