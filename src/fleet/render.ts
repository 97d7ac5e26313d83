// Replies for `/gpu fit` and the notify messages: where a job fits, how to start it there, and when
// nothing fits, what is closest and who holds it.
import type { Reply, ReplySection } from '../core/reply.js';
import { formatMiB } from './args.js';
import type { FitCandidate, FitGpu, FitResult, Holder } from './fit.js';

/** Rows shown at most; the rest are counted. */
const MAX_ROWS = 10;

/** What to type to start there: the ssh hint (none for this machine) and the device list. */
export function startLines(c: FitCandidate): string {
  return [...(c.ssh ? [c.ssh] : []), `${c.env} <your command>`].join('\n');
}

export function holdersText(holders: readonly Holder[]): string {
  if (!holders.length) return 'nobody';
  const shown = holders.slice(0, 4).map((h) => `${h.user ?? 'a container'} (pid ${h.pid}${h.memoryMiB === null ? '' : `, ${formatMiB(h.memoryMiB)}`})`);
  return shown.join(', ') + (holders.length > 4 ? ` and ${holders.length - 4} more` : '');
}

function gpuLine(g: FitGpu, hours: number): string {
  const growth = g.growthMiBPerHour > 0 ? `, growing ${Math.round(g.growthMiBPerHour)} MiB/h (${formatMiB(g.growthMiBPerHour * hours)} in ${hours} h)` : '';
  return `GPU ${g.index}: ${formatMiB(g.freeMiB)} free of ${formatMiB(g.totalMiB)}, ${formatMiB(g.usableMiB)} usable after a ${formatMiB(g.marginMiB)} margin${growth}`;
}

export function requestText(r: FitResult['request'], size: string): string {
  return `${size}${r.count > 1 ? ` on each of ${r.count} GPUs of one host` : ''}${r.hours > 1 ? ` for ${r.hours} h` : ''}`;
}

export function fitReply(result: FitResult, size: string): Reply {
  const r = result.request;
  const sections: ReplySection[] = [];
  if (result.fits.length) {
    const best = result.fits[0];
    sections.push({ heading: `Best: ${best.host} GPU ${best.gpus.map((g) => g.index).join(',')}`, code: startLines(best) });
    sections.push({
      table: {
        columns: ['Host', 'GPUs', 'Usable (min)', 'Held by', 'Start with'],
        rows: result.fits
          .slice(0, MAX_ROWS)
          .map((c) => [
            c.host,
            c.gpus.map((g) => g.index).join(','),
            formatMiB(c.minUsableMiB),
            c.othersHere ? holdersText(c.gpus.flatMap((g) => g.holders)) : 'nobody else',
            c.env,
          ]),
      },
    });
    if (result.fits.length > MAX_ROWS) sections.push({ text: `and ${result.fits.length - MAX_ROWS} more` });
  } else {
    const c = result.closest;
    // Short of memory, or enough memory on GPUs someone else uses (then it is theirs to ask, or --shared).
    const why =
      c && c.minUsableMiB >= r.sizeMiB ? "enough memory, but someone else's process runs there" : c ? `${formatMiB(r.sizeMiB - c.minUsableMiB)} short` : '';
    const text = c
      ? `Closest: ${c.host} GPU ${c.gpus.map((g) => g.index).join(',')}, ${formatMiB(Math.max(0, c.minUsableMiB))} usable, ${why}.\n` +
        c.gpus.map((g) => `${gpuLine(g, r.hours)}; held by ${holdersText(g.holders)}`).join('\n')
      : r.count > 1
        ? `No host answered with ${r.count} GPUs whose memory it reports.`
        : 'No GPU answered with its memory.';
    sections.push({ heading: 'Nothing fits now', text });
    if (c) sections.push({ text: `\`/gpu notify ${size}${r.count > 1 ? ` ${r.count}` : ''}\` sends you one message when it fits.` });
  }
  if (result.sharedFits && !r.shared)
    sections.push({ text: `${result.sharedFits} more ${r.count > 1 ? 'host(s)' : 'GPU(s)'} fit where someone else's process runs: add --shared to see them.` });
  const notes = [
    `Counted: free memory minus max(margin, % of the card)${r.hours > 1 ? ` minus the leak watch's growth over ${r.hours} h` : ", minus the leak watch's growth"}.`,
  ];
  if (result.growthApplied) notes.push(`${result.growthApplied} GPU(s) have a growing process; their growth is counted.`);
  if (result.skipped.length)
    notes.push(`Not judged: ${result.skipped.slice(0, 5).join('; ')}${result.skipped.length > 5 ? `; and ${result.skipped.length - 5} more` : ''}`);
  return {
    title: result.fits.length
      ? `${requestText(r, size)} fits on ${result.fits.length} ${r.count > 1 ? 'host(s)' : 'GPU(s)'}`
      : `${requestText(r, size)} fits nowhere now`,
    severity: result.fits.length ? 'ok' : 'warning',
    sections,
    footer: notes.join(' '),
  };
}
