// `ps -o pid=,user=,etimes=,pcpu=,rss=,args=` lines (the status command's ps section): who runs a GPU
// process, for how long, its CPU share and its host memory. Linear: one anchored pattern per line,
// every field bounded; input past MAX_PS_LINES lines is not read.

export interface PsRow {
  pid: number;
  user: string;
  elapsedSeconds: number | null;
  /** procps' %CPU: CPU time used divided by the time the process has run (a lifetime average, not now). */
  cpuPct: number | null;
  /** Resident set size in bytes (ps prints KiB). */
  rssBytes: number | null;
  args: string;
}

/** Lines read from one ps section: the status command lists at most 512 pids. */
export const MAX_PS_LINES = 4096;
const MAX_PS_LINE_CHARS = 8192;

// pid, user, etimes, then pcpu ("12.3", "1234" past 999.9 %) and rss (KiB), then the command line. A line
// without the pcpu and rss columns (the earlier `pid=,user=,etimes=,args=` format) still reads, with both null.
const PS_LINE = /^\s*(\d{1,10})\s+(\S{1,64})\s+(\d{1,12}|-)\s+(?:(\d{1,6}(?:\.\d{1,2})?|-)\s+(\d{1,12}|-)\s+)?(.*)$/;

const numberOrNull = (s: string | undefined) => (s === undefined || s === '-' ? null : Number(s));

export function parsePs(text: string): Map<number, PsRow> {
  const rows = new Map<number, PsRow>();
  const lines = text.split('\n', MAX_PS_LINES);
  for (const line of lines) {
    if (line.length > MAX_PS_LINE_CHARS) continue;
    const m = PS_LINE.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    const rssKiB = numberOrNull(m[5]);
    rows.set(pid, {
      pid,
      user: m[2],
      elapsedSeconds: numberOrNull(m[3]),
      cpuPct: numberOrNull(m[4]),
      rssBytes: rssKiB === null ? null : rssKiB * 1024,
      args: m[6].trim(),
    });
  }
  return rows;
}
