// What the Slack and Discord adapters share: running a command with audit + metrics + logs,
// admin resolution, allowed channels, per-channel pacing and size-capped downloads of attached logs.
import type { CommandContext, Platform } from '../core/command.js';
import type { CommandRegistry, DispatchOutcome } from '../core/registry.js';
import type { Services } from '../core/services.js';
import type { Config } from '../core/config.js';
import type { AuditStore } from '../ops/audit.js';
import type { Metrics } from '../ops/metrics.js';
import type { Logger } from '../ops/logger.js';
import { scrubSecrets } from '../ops/logger.js';

export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Commands that answer at once; everything else may touch SSH hosts and is acked first. */
export const FAST_COMMANDS = new Set(['help', '']);

export interface AdapterDeps {
  registry: CommandRegistry;
  services: Services;
  config: Config;
  logger: Logger;
  audit?: AuditStore;
  metrics?: Metrics;
}

export interface Invocation {
  platform: Platform;
  userId: string;
  channelId?: string;
  isAdmin: boolean;
  line: string;
}

/** Dispatches one command line and records it (audit row, metrics, a log line without the paste). */
export async function runCommand(deps: AdapterDeps, inv: Invocation): Promise<DispatchOutcome> {
  const ctx: CommandContext = { platform: inv.platform, userId: inv.userId, isAdmin: inv.isAdmin, channelId: inv.channelId, services: deps.services };
  const result = await deps.registry.dispatch(inv.line, ctx);
  // Never echo a secret back, even if a command error carried one.
  for (const s of result.reply.sections) if (s.text) s.text = scrubSecrets(s.text);
  const summary = commandSummary(inv.line, result.command);
  try {
    deps.audit?.record({ ts: Date.now(), platform: inv.platform, user: inv.userId, channel: inv.channelId ?? null, command: summary, outcome: result.outcome, ms: Math.round(result.ms * 10) / 10 });
  } catch (e) {
    deps.logger.error({ err: (e as Error).message }, 'audit write failed');
  }
  deps.metrics?.commands.inc({ platform: inv.platform, command: result.command || '(none)', outcome: result.outcome });
  deps.metrics?.commandSeconds.observe({ platform: inv.platform, command: result.command || '(none)' }, result.ms / 1000);
  const rule = /^rule (\S+)/.exec(result.reply.footer ?? '');
  if (rule && result.command === 'diagnose') deps.metrics?.ruleHits.inc({ rule: rule[1] });
  deps.logger.info({ platform: inv.platform, user: inv.userId, channel: inv.channelId, command: summary, outcome: result.outcome, ms: Math.round(result.ms) }, 'command');
  return result;
}

/** What goes in logs and the audit table: the command and its first-line arguments, never a whole paste. */
export function commandSummary(line: string, command: string): string {
  if (command === 'diagnose') return `diagnose (${line.length} chars)`;
  return line.split('\n', 1)[0].replace(/^\s*\/?gpu\s*/i, '').slice(0, 200);
}

export function isSlackAdmin(config: Config, userId: string): boolean {
  return config.admins.slack.includes(userId);
}

export function isDiscordAdmin(config: Config, userId: string, roleIds: Iterable<string> = []): boolean {
  const admins = new Set(config.admins.discord);
  if (admins.has(userId)) return true;
  for (const r of roleIds) if (admins.has(r)) return true;
  return false;
}

/** Allowed channels (or Discord guilds): absent list = everywhere; DMs are always allowed. */
export function channelAllowed(allowed: string[] | undefined, ...ids: (string | null | undefined)[]): boolean {
  if (!allowed || allowed.length === 0) return true;
  return ids.some((id) => id != null && allowed.includes(id));
}

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

/** Reads at most maxBytes of a URL (streamed; the rest is never fetched into memory). */
export async function downloadCapped(url: string, headers: Record<string, string>, maxBytes = MAX_FILE_BYTES, declaredSize?: number): Promise<Download> {
  const res = await fetch(url, { headers, redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`download failed: HTTP ${res.status}`);
  const chunks: Buffer[] = [];
  let read = 0;
  let truncated = false;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - read;
    if (value.length > room) {
      chunks.push(Buffer.from(value.subarray(0, room)));
      read += room;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(Buffer.from(value));
    read += value.length;
  }
  const lengthHeader = Number(res.headers.get('content-length') ?? NaN);
  const totalBytes = Math.max(read, declaredSize ?? 0, Number.isFinite(lengthHeader) ? lengthHeader : 0);
  return { data: Buffer.concat(chunks), totalBytes, truncated: truncated || totalBytes > read };
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

export const TEXT_FILE = /\.(log|txt|out|err)$/i;

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
