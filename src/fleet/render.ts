// Replies for `/gpu fit` and the notify messages: where a job fits, how to start it there, and when
// nothing fits, what is closest and who holds it.
import { t, type Locale } from '../core/i18n.js';
import type { Reply, ReplySection } from '../core/reply.js';
import { formatMiB } from './args.js';
import type { FitCandidate, FitGpu, FitResult, Holder } from './fit.js';

/** Rows shown at most; the rest are counted. */
const MAX_ROWS = 10;

/** What to type to start there: the ssh hint (none for this machine) and the device list. */
export function startLines(c: FitCandidate, loc?: Locale): string {
  return [...(c.ssh ? [c.ssh] : []), `${c.env} ${t(loc, 'fit.yourCommand')}`].join('\n');
}

export function holdersText(holders: readonly Holder[], loc?: Locale): string {
  if (!holders.length) return t(loc, 'fit.nobody');
  const shown = holders
    .slice(0, 4)
    .map((h) => `${h.user ?? t(loc, 'fit.aContainer')} (pid ${h.pid}${h.memoryMiB === null ? '' : `, ${formatMiB(h.memoryMiB)}`})`);
  return shown.join(', ') + (holders.length > 4 ? t(loc, 'fit.andMore', { n: holders.length - 4 }) : '');
}

function gpuLine(g: FitGpu, hours: number, loc: Locale | undefined): string {
  const growth =
    g.growthMiBPerHour > 0 ? t(loc, 'fit.gpu.growth', { rate: Math.round(g.growthMiBPerHour), total: formatMiB(g.growthMiBPerHour * hours), hours }) : '';
  return t(loc, 'fit.gpu.line', {
    gpu: g.index,
    free: formatMiB(g.freeMiB),
    total: formatMiB(g.totalMiB),
    usable: formatMiB(g.usableMiB),
    margin: formatMiB(g.marginMiB),
    growth,
  });
}

export function requestText(r: FitResult['request'], size: string, loc?: Locale): string {
  return `${size}${r.count > 1 ? t(loc, 'notify.describe.count', { n: r.count }) : ''}${r.hours > 1 ? t(loc, 'fit.forHours', { hours: r.hours }) : ''}`;
}

export function fitReply(result: FitResult, size: string, loc?: Locale): Reply {
  const r = result.request;
  const sections: ReplySection[] = [];
  if (result.fits.length) {
    const best = result.fits[0];
    sections.push({ heading: t(loc, 'fit.best', { host: best.host, gpus: best.gpus.map((g) => g.index).join(',') }), code: startLines(best, loc) });
    sections.push({
      table: {
        columns: [t(loc, 'mem.col.host'), t(loc, 'fit.col.gpus'), t(loc, 'fit.col.usable'), t(loc, 'fit.col.heldBy'), t(loc, 'fit.col.start')],
        rows: result.fits.slice(0, MAX_ROWS).map((c) => [
          c.host,
          c.gpus.map((g) => g.index).join(','),
          formatMiB(c.minUsableMiB),
          c.othersHere
            ? holdersText(
                c.gpus.flatMap((g) => g.holders),
                loc,
              )
            : t(loc, 'fit.nobodyElse'),
          c.env,
        ]),
      },
    });
    if (result.fits.length > MAX_ROWS) sections.push({ text: t(loc, 'fit.moreRows', { n: result.fits.length - MAX_ROWS }) });
  } else {
    const c = result.closest;
    // Short of memory, or enough memory on GPUs someone else uses (then it is theirs to ask, or --shared).
    const why =
      c && c.minUsableMiB >= r.sizeMiB ? t(loc, 'fit.why.shared') : c ? t(loc, 'fit.why.short', { short: formatMiB(r.sizeMiB - c.minUsableMiB) }) : '';
    const text = c
      ? t(loc, 'fit.closest', { host: c.host, gpus: c.gpus.map((g) => g.index).join(','), usable: formatMiB(Math.max(0, c.minUsableMiB)), why }) +
        '\n' +
        c.gpus.map((g) => t(loc, 'fit.gpu.heldBy', { line: gpuLine(g, r.hours, loc), holders: holdersText(g.holders, loc) })).join('\n')
      : r.count > 1
        ? t(loc, 'fit.noHost', { n: r.count })
        : t(loc, 'fit.noGpu');
    sections.push({ heading: t(loc, 'fit.nothing'), text });
    if (c) sections.push({ text: t(loc, 'fit.notifyHint', { line: `/gpu notify ${size}${r.count > 1 ? ` ${r.count}` : ''}` }) });
  }
  if (result.sharedFits && !r.shared) sections.push({ text: t(loc, r.count > 1 ? 'fit.sharedHosts' : 'fit.sharedGpus', { n: result.sharedFits }) });
  const notes = [r.hours > 1 ? t(loc, 'fit.counted.hours', { hours: r.hours }) : t(loc, 'fit.counted')];
  if (result.growthApplied) notes.push(t(loc, 'fit.growthApplied', { n: result.growthApplied }));
  if (result.skipped.length)
    notes.push(
      t(loc, 'fit.notJudged', {
        list: result.skipped.slice(0, 5).join('; ') + (result.skipped.length > 5 ? t(loc, 'fit.notJudged.more', { n: result.skipped.length - 5 }) : ''),
      }),
    );
  return {
    title: result.fits.length
      ? t(loc, r.count > 1 ? 'fit.title.hosts' : 'fit.title.gpus', { what: requestText(r, size, loc), n: result.fits.length })
      : t(loc, 'fit.title.nowhere', { what: requestText(r, size, loc) }),
    severity: result.fits.length ? 'ok' : 'warning',
    sections,
    footer: notes.join(' '),
  };
}
