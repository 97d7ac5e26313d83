// A diagnosis checked against the live host (issue 14 §4): when a paste names a registered host (a
// shell prompt such as `alice@gpu3:~$`, `host:gpu3` before the log, or the host's name in the log),
// the reply adds what that GPU holds right now and who holds it. "The log says 1.2 GiB free on GPU 0;
// right now bob's pid 4121 holds 21 GiB there" turns "halve your batch" into "ask bob or move".
// Pure: the caller reads the host (read-only, with the hosts service's own timeouts).
import { t, type Locale } from '../core/i18n.js';
import { renderAll } from '../core/message.js';
import type { ReplySection } from '../core/reply.js';
import type { HostStatusResult } from '../core/services.js';
import { formatMiB } from './fixes/arithmetic.js';
import type { Incident } from './incident/index.js';

/** Only the head and tail of a huge paste are searched for host names (prompts sit there). */
const WINDOW = 64 * 1024;
const MAX_HOSTS = 2;
// "alice@gpu3:~$", "[alice@gpu3 ~]$", "(env) alice@gpu3:/data$": user@host then ':' or a space.
const PROMPT = /[A-Za-z_][\w.-]{0,31}@([A-Za-z0-9][A-Za-z0-9._-]{0,62})[:\s\]]/g;
// "/gpu diagnose host:gpu3 <log>": the first word of the paste.
const EXPLICIT = /^\s{0,8}host:([A-Za-z0-9][A-Za-z0-9._-]{0,62})(?:\s|$)/;

const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_.-]/.test(c);

/** Registered hosts the paste names, most explicit first: `host:NAME`, then prompts, then the name in the text. */
export function hostsNamedIn(text: string, registered: readonly string[]): string[] {
  const known = new Map(registered.map((n) => [n.toLowerCase(), n]));
  const out: string[] = [];
  const add = (name: string | undefined) => {
    const n = name === undefined ? undefined : known.get(name.toLowerCase());
    if (n && !out.includes(n)) out.push(n);
  };
  add(EXPLICIT.exec(text)?.[1]);
  const hay = text.length > 2 * WINDOW ? text.slice(0, WINDOW) + '\n' + text.slice(-WINDOW) : text;
  for (const m of hay.matchAll(PROMPT)) {
    add(m[1]);
    if (out.length >= MAX_HOSTS) return out;
  }
  // A registered name in the log as a whole word (names under 3 characters would match too much).
  const lower = hay.toLowerCase();
  for (const [key, name] of known) {
    if (key.length < 3 || out.includes(name)) continue;
    for (let at = lower.indexOf(key); at >= 0; at = lower.indexOf(key, at + 1)) {
      // "gpu3.lab.example" names gpu3; "mygpu3" and "gpu3x" do not.
      if (!isWordChar(lower[at - 1]) && (lower[at + key.length] === '.' || !isWordChar(lower[at + key.length]))) {
        add(name);
        break;
      }
    }
    if (out.length >= MAX_HOSTS) break;
  }
  return out.slice(0, MAX_HOSTS);
}

/** "Right now on gpu3": the GPU the log names (else every GPU), with who holds it. */
export function liveSection(result: HostStatusResult, incident: Incident | undefined, loc?: Locale): ReplySection {
  const heading = t(loc, 'live.heading', { host: result.name });
  if (!result.ok)
    return { heading, text: t(loc, 'live.unreadable', { host: result.name, error: result.problems?.length ? renderAll(loc, result.problems) : result.error }) };
  const gpuIndex = incident?.figures.gpuIndex;
  const gpus = gpuIndex !== undefined ? result.gpus.filter((g) => g.index === gpuIndex) : result.gpus;
  if (!gpus.length)
    return {
      heading,
      text: t(loc, 'live.noSuchGpu', { host: result.name, gpu: String(gpuIndex), has: result.gpus.map((g) => g.index).join(', ') || t(loc, 'live.none') }),
    };
  const lines: string[] = [];
  for (const g of gpus.slice(0, 8)) {
    const procs = result.processes.filter((p) => p.gpuIndex === g.index).sort((a, b) => (b.memoryMiB ?? 0) - (a.memoryMiB ?? 0));
    const used = g.memoryUsedMiB;
    const total = g.memoryTotalMiB;
    const free = used !== null && total !== null ? total - used : null;
    const holders = procs.slice(0, 3).map((p) =>
      t(loc, 'live.holds', {
        user: p.user ?? t(loc, 'live.containerProcess'),
        pid: p.pid,
        amount: p.memoryMiB !== null ? formatMiB(p.memoryMiB) : t(loc, 'live.unknownAmount'),
      }),
    );
    const head = t(loc, 'live.gpu', {
      gpu: g.index,
      used: used !== null ? formatMiB(used) : '?',
      total: total !== null ? formatMiB(total) : '?',
      free: free !== null ? t(loc, 'live.free', { free: formatMiB(free) }) : '',
    });
    lines.push(`${head}; ${holders.length ? holders.join('; ') : t(loc, 'live.nobody')}`);
  }
  const said =
    gpuIndex !== undefined && incident?.figures.freeMiB !== undefined
      ? t(loc, 'live.logSaid', { free: formatMiB(incident.figures.freeMiB), gpu: gpuIndex }) + '\n'
      : '';
  const others = result.gpus.filter((g) => g.memoryUsedMiB !== null && g.memoryTotalMiB !== null && (gpuIndex === undefined || g.index !== gpuIndex));
  const emptiest = others.sort((a, b) => b.memoryTotalMiB! - b.memoryUsedMiB! - (a.memoryTotalMiB! - a.memoryUsedMiB!))[0];
  const move =
    gpuIndex !== undefined && emptiest && emptiest.memoryTotalMiB! - emptiest.memoryUsedMiB! > Math.max(2 * (free(gpus[0]) ?? 0), (free(gpus[0]) ?? 0) + 4096)
      ? '\n' + t(loc, 'live.move', { gpu: emptiest.index, free: formatMiB(emptiest.memoryTotalMiB! - emptiest.memoryUsedMiB!) })
      : '';
  return { heading, text: `${said}${lines.join('\n')}${move}` };
}

const free = (g: { memoryUsedMiB: number | null; memoryTotalMiB: number | null } | undefined) =>
  g && g.memoryUsedMiB !== null && g.memoryTotalMiB !== null ? g.memoryTotalMiB - g.memoryUsedMiB : undefined;
