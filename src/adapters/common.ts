// What the Slack and Discord adapters share: running a command with audit + metrics + logs,
// allowed channels and DMs, per-channel pacing and bounded downloads of attached logs
// (size-capped, a few files per message, a few messages' files in memory at once, allowed hosts only).
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { CommandContext, Platform } from '../core/command.js';
import { ProgressPacer, type ProgressPacerOptions, type ProgressSink } from '../core/progress.js';
import type { CommandRegistry, DispatchOutcome } from '../core/registry.js';
import { invocationOf, type CommandInvocation } from '../core/invocation.js';
import type { ServerPlatform } from '../core/platform.js';
import type { Services } from '../core/services.js';
import type { Config } from '../config.js';
import { rememberUserLocale, resolveLocale, t, type Locale } from '../core/i18n.js';
import type { AuditSink } from '../ops/audit.js';
import type { Metrics } from '../ops/metrics.js';
import type { Logger } from '../ops/logger.js';
import { scrubSecrets } from '../ops/logger.js';

/** What one message's files may add up to (also the most one file is read): diagnose reads 16 MB. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Files read per message; the reply names the ones skipped. */
export const MAX_FILES_PER_MESSAGE = 3;
/**
 * Messages whose files are downloaded and diagnosed at once, process-wide (all adapters). One: a 16 MB
 * log costs ~100 MB transiently while it is decoded, normalised and matched, and with two at once the
 * bot's peak under a burst of 16 MB files came within a few MB of the 400 MB bound (408 MB once on a
 * loaded CI machine). Files queue instead; small pastes in message text do not take a slot.
 */
export const MAX_CONCURRENT_DOWNLOADS = 1;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 3;
/** Commands that answer at once; everything else may touch SSH hosts and is acked first. */
export const FAST_COMMANDS = new Set(['help', '']);

export interface AdapterDeps {
  registry: CommandRegistry;
  services: Services;
  config: Config;
  logger: Logger;
  /** The audit trail: SQLite in data_dir, or Postgres shared by replicas. */
  audit?: Pick<AuditSink, 'record'>;
  metrics?: Metrics;
  /** Pacing of interim replies (quiet period, interval); the defaults of core/progress.ts unless set. */
  progressPacing?: Pick<ProgressPacerOptions, 'quietMs' | 'intervalMs' | 'editTimeoutMs'>;
}

export interface Invocation {
  platform: Platform;
  userId: string;
  channelId?: string;
  isAdmin: boolean;
  /** What to run: a line as typed (tokenised once, by the registry), or an invocation built from typed options or a paste. */
  command: string | CommandInvocation;
  /** The asker's language as the platform tells it (Discord's interaction locale, Slack's user locale). */
  userLocale?: Locale;
  /** Where a long command's interim replies go (see progressPacer). */
  progress?: ProgressPacer;
  /** Awaited after the registry's checks, before the command runs (DispatchOptions.beforeRun): the adapter's ack. */
  beforeRun?: () => Promise<void>;
  /** Settles once the adapter's ack left (or failed): the audit row is written only then, never before the ack. */
  ackSent?: Promise<unknown>;
}

/** Dispatches one command and records it (audit row, metrics, a log line without the paste). */
export async function runCommand(deps: AdapterDeps, inv: Invocation): Promise<DispatchOutcome> {
  const invocation = typeof inv.command === 'string' ? invocationOf(inv.command) : inv.command;
  const ctx: CommandContext = {
    platform: inv.platform,
    userId: inv.userId,
    isAdmin: inv.isAdmin,
    channelId: inv.channelId,
    locale: resolveLocale(deps.config.locale, inv.channelId, inv.userLocale),
    services: deps.services,
  };
  // Direct messages sent later (owner messages, notify) use the language this user was last seen with.
  rememberUserLocale(inv.platform, inv.userId, inv.userLocale);
  const result = await deps.registry.dispatch(invocation ?? inv.command, ctx, { progress: inv.progress, beforeRun: inv.beforeRun });
  // Never echo a secret back, even if a command error carried one.
  for (const s of result.reply.sections) if (s.text) s.text = scrubSecrets(s.text);
  const summary = commandSummary(invocation, result.command);
  const entry = {
    ts: Date.now(),
    platform: inv.platform,
    user: inv.userId,
    channel: inv.channelId ?? null,
    command: summary,
    outcome: result.outcome,
    ms: Math.round(result.ms * 10) / 10,
  };
  const audit = () => {
    try {
      deps.audit?.record(entry);
    } catch (e) {
      deps.logger.error({ err: (e as Error).message }, 'audit write failed');
    }
  };
  // A refusal or a quick answer is the ack itself: its audit row waits for the ack to leave, so no
  // database write holds the ack up (bench:acks: the SQLite insert before help's ack, p99 92 ms).
  if (inv.ackSent) void inv.ackSent.then(audit, audit);
  else audit();
  // Label values from fixed sets only (the registry's command names, the rule base's ids): a user's
  // made-up command name must not become a new time series.
  const command = metricCommandLabel(deps.registry, result.command);
  deps.metrics?.commands.inc({ platform: inv.platform, command, outcome: result.outcome });
  deps.metrics?.commandSeconds.observe({ platform: inv.platform, command }, result.ms / 1000);
  // The rule as the diagnosis named it (the outcome carries its id; the footer's words are the asker's language).
  const rule = result.rule;
  if (rule !== undefined && result.command === 'diagnose')
    deps.metrics?.ruleHits.inc({ rule: deps.services.rules.rules.some((r) => r.id === rule) ? rule : 'unknown' });
  deps.logger.info(
    { platform: inv.platform, user: inv.userId, channel: inv.channelId, command: summary, outcome: result.outcome, ms: Math.round(result.ms) },
    'command',
  );
  return result;
}

/**
 * Paces the interim replies of one message's work (the core's pacer) into an adapter's `show`: scrubbed
 * of secrets like final replies; a failed or hung edit is logged, and the answer comes regardless. Made
 * when the message arrives, so its quiet period covers downloading attached files too.
 */
export function progressPacer(deps: Pick<AdapterDeps, 'logger' | 'progressPacing'>, platform: Platform, show: ProgressSink): ProgressPacer {
  return new ProgressPacer((reply) => show({ ...reply, sections: reply.sections.map((s) => (s.text ? { ...s, text: scrubSecrets(s.text) } : s)) }), {
    ...deps.progressPacing,
    onError: (e) => deps.logger.warn({ platform, err: scrubSecrets(e instanceof Error ? e.message : String(e)) }, 'progress update failed; the answer follows'),
  });
}

/** A known command's name, "(none)" for a bare /gpu, else "unknown". */
export function metricCommandLabel(registry: CommandRegistry, name: string): string {
  if (name === '') return '(none)';
  return registry.commands.has(name) ? name : 'unknown';
}

/** A word as it would be typed: quoted when it holds a blank. */
const quoted = (word: string) => (/\s/.test(word) && !/^--/.test(word) ? `"${word}"` : word);

/**
 * What goes in logs and the audit table: the command and its first-line arguments (as typed or given as
 * options), never a whole paste: a diagnosis is its size (characters of text, bytes of files).
 */
export function commandSummary(invocation: CommandInvocation | null, command: string): string {
  if (!invocation) return '';
  if (command === 'diagnose') {
    const bytes = (invocation.files ?? []).reduce((n, f) => n + f.length, 0);
    return `diagnose (${invocation.text.length} chars${bytes ? `, ${bytes} bytes of files` : ''})`;
  }
  const { _: words = [], ...flags } = invocation.options;
  const parts = [invocation.command, ...words.map(String)];
  for (const [key, value] of Object.entries(flags)) parts.push(value === true ? `--${key}` : `--${key}=${quoted(String(value))}`);
  return parts
    .map((p, i) => (i === 0 ? p : quoted(p)))
    .join(' ')
    .split('\n', 1)[0]
    .slice(0, 200);
}

/** Allowed channels (or Discord guilds): absent list = everywhere. Not for DMs (directMessagesAllowed). */
export function channelAllowed(allowed: string[] | undefined, ...ids: (string | null | undefined)[]): boolean {
  if (!allowed || allowed.length === 0) return true;
  return ids.some((id) => id != null && allowed.includes(id));
}

/**
 * Whether the bot answers direct messages on a platform: `channels.allow_dms` when set, else only when
 * that platform has no channel allow-list (a list means "only there", and a DM is not there).
 */
export function directMessagesAllowed(config: Config, platform: ServerPlatform): boolean {
  return config.channels.allow_dms ?? !config.channels[platform]?.length;
}

/** The answer to a direct message where DMs are off, in the asker's language. */
export const dmRefusal = (loc: Locale | undefined): string => t(loc, 'adapter.dmRefusal');

/** The answer to a command in a channel outside `channels.<platform>` (`dm`: whether to suggest a DM). */
export const channelRefusal = (loc: Locale | undefined, list: string, dm: boolean): string =>
  t(loc, 'adapter.channelRefusal', { list, dm: dm ? t(loc, 'adapter.orDm') : '' });

/** About one message per second per channel (Slack's chat.postMessage guidance); Discord shares it. */
export class ChannelPacer {
  private next = new Map<string, number>();
  constructor(private intervalMs = 1000) {}
  async run<T>(channel: string, send: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const at = Math.max(now, this.next.get(channel) ?? 0);
    this.next.set(channel, at + this.intervalMs);
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
    try {
      return await send();
    } finally {
      if (this.next.get(channel)! <= Date.now()) this.next.delete(channel);
    }
  }
}

export interface Download {
  data: Buffer;
  /** Bytes the platform says the file has (may exceed what was read). */
  totalBytes: number;
  truncated: boolean;
}

/** Counts holders of a few slots; `acquire` waits for one (FIFO) and returns its release. */
export class Slots {
  private free: number;
  private waiting: (() => void)[] = [];
  constructor(readonly size: number) {
    this.free = size;
  }
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiting.push(r));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }
}

/**
 * Process-wide: the messages whose files are being downloaded and diagnosed. A slot is held from the
 * first download to the reply, so at most this many messages' file contents are in memory at once.
 */
export const downloadSlots = new Slots(MAX_CONCURRENT_DOWNLOADS);

/** Slack's file host, plus the origin of SLACK_API_URL when set (a proxy, or the tests' fake Slack). */
export function slackFileHosts(apiUrl?: string): (url: URL) => boolean {
  const extra = apiUrl ? new URL(apiUrl).origin : null;
  return (url) => (url.protocol === 'https:' && url.host === 'files.slack.com') || (extra !== null && url.origin === extra);
}

export class DownloadRefused extends Error {}

function get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : null;
  if (!send) return Promise.reject(new DownloadRefused(`${url.protocol} URLs are not downloaded`));
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, signal }, resolve);
    req.once('error', reject);
    req.end();
  });
}

/**
 * Reads at most maxBytes of a URL (streamed; the rest is never fetched into memory). Redirects are
 * followed by hand, at most MAX_REDIRECTS: with `allowed`, every hop's URL is checked before anything
 * (the Authorization header among it) is sent there, and a hop outside it ends the download.
 */
export async function downloadCapped(
  url: string,
  headers: Record<string, string>,
  maxBytes = MAX_FILE_BYTES,
  declaredSize?: number,
  allowed?: { test: (url: URL) => boolean; name: string },
): Promise<Download> {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new DownloadRefused('the file has no valid URL');
  }
  for (let hop = 0; ; hop++) {
    if (allowed && !allowed.test(current))
      throw new DownloadRefused(`${current.protocol}//${current.host} is not ${allowed.name}, so I did not download from it`);
    const res = await get(current, headers, signal);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new Error(`download failed: more than ${MAX_REDIRECTS} redirects`);
      current = new URL(res.headers.location, current);
      continue;
    }
    if (status !== 200) {
      res.resume();
      throw new Error(`download failed: HTTP ${status}`);
    }
    const lengthHeader = Number(res.headers['content-length'] ?? NaN);
    // One buffer of the expected size (at most maxBytes), filled as chunks arrive: no second copy.
    let data = Buffer.allocUnsafe(Math.min(maxBytes, Number.isFinite(lengthHeader) && lengthHeader > 0 ? lengthHeader : 64 * 1024));
    let read = 0;
    let truncated = false;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        const take = Math.min(chunk.length, maxBytes - read);
        if (read + take > data.length) {
          const grown = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(read + take, data.length * 2)));
          data.copy(grown, 0, 0, read);
          data = grown;
        }
        chunk.copy(data, read, 0, take);
        read += take;
        if (read >= maxBytes) {
          truncated = chunk.length > take;
          break; // leaving the loop destroys the response: the rest is never read
        }
      }
    } finally {
      res.destroy();
    }
    const totalBytes = Math.max(read, declaredSize ?? 0, Number.isFinite(lengthHeader) ? lengthHeader : 0);
    return { data: data.subarray(0, read), totalBytes, truncated: truncated || totalBytes > read };
  }
}

export interface AttachedFile {
  name: string;
  url: string;
  size: number;
}

/**
 * Reads a message's text files within the limits: the first MAX_FILES_PER_MESSAGE, MAX_FILE_BYTES for
 * all of them together. Returns their bytes (decoded once, by the command that reads them) and the
 * notes the reply starts with (what was read, truncated, refused or skipped). Call it inside
 * downloadSlots.run, with the diagnosis.
 */
export async function readAttachedFiles(
  files: AttachedFile[],
  download: (f: AttachedFile, maxBytes: number) => Promise<Download>,
  budget = MAX_FILE_BYTES,
  loc?: Locale,
): Promise<{ files: Buffer[]; notes: string[] }> {
  const read: Buffer[] = [];
  const notes: string[] = [];
  let left = budget;
  for (const [i, f] of files.entries()) {
    if (i >= MAX_FILES_PER_MESSAGE) {
      notes.push(t(loc, 'note.file.tooMany', { name: f.name, max: MAX_FILES_PER_MESSAGE }));
      continue;
    }
    if (left <= 0) {
      notes.push(t(loc, 'note.file.budget', { name: f.name, budget: fmtBytes(budget) }));
      continue;
    }
    try {
      const room = left;
      const got = await download(f, room);
      if (looksBinary(got.data)) {
        notes.push(t(loc, 'note.file.binary', { name: f.name }));
        continue;
      }
      left -= got.data.length;
      notes.push(
        got.truncated
          ? t(loc, 'note.file.truncated', { name: f.name, total: fmtBytes(got.totalBytes), room: fmtBytes(room), read: fmtBytes(got.data.length) })
          : t(loc, 'note.file.read', { name: f.name, size: fmtBytes(got.data.length) }),
      );
      read.push(got.data);
    } catch (e) {
      notes.push(t(loc, 'note.file.download', { name: f.name, error: (e as Error).message }));
    }
  }
  return { files: read, notes };
}

/** True when a buffer is not text (NUL bytes or many control characters in its first 8 KB). */
export function looksBinary(buf: Buffer): boolean {
  const head = buf.subarray(0, 8192);
  if (head.includes(0)) return true;
  let ctrl = 0;
  for (const b of head) if (b < 9 || (b > 13 && b < 32)) ctrl++;
  return head.length > 0 && ctrl / head.length > 0.1;
}

export const fmtBytes = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} bytes`);

/** Replies still being worked on, so shutdown can wait for them (graceful SIGTERM). */
export class Inflight {
  private pending = new Set<Promise<unknown>>();

  track = <T>(p: Promise<T>): Promise<T> => {
    this.pending.add(p);
    p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  };

  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
