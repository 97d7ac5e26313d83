// Reading single values that nvidia-smi prints. A value the tool did not report is null, never 0:
// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "ERR!", "[GPU requires reset]", "" ...

/** Markers meaning the GPU itself is in trouble (as opposed to "this field does not apply"), most severe first. */
const ERROR_MARKERS = ['GPU is lost', 'GPU requires reset', 'Unknown Error', 'ERR!'];

/** The error marker a cell shows ("ERR!", "[GPU requires reset]"), or null. */
export function errorMarker(cell: string | undefined): string | null {
  if (!cell) return null;
  const t = cell.trim();
  if (t.length > 64) return null;
  for (const m of ERROR_MARKERS) {
    if (t === m || t === `[${m}]`) return t;
  }
  return null;
}

/** The most severe error marker among the cells ("[GPU requires reset]" before "ERR!"), or null. */
export function worstErrorMarker(cells: (string | undefined)[]): string | null {
  let worst: string | null = null;
  let rank = ERROR_MARKERS.length;
  for (const cell of cells) {
    const m = errorMarker(cell);
    if (m === null) continue;
    const r = ERROR_MARKERS.findIndex((e) => m === e || m === `[${e}]`);
    if (r < rank) {
      rank = r;
      worst = m;
    }
  }
  return worst;
}

/** Whether a cell says "no value" rather than giving one. */
export function isMissing(cell: string | undefined): boolean {
  if (cell === undefined) return true;
  const t = cell.trim();
  if (t === '' || t === '-' || t === 'N/A' || t === 'Not Supported' || t === 'ERR!') return true;
  if (t.startsWith('[') && t.endsWith(']')) return true; // every bracketed token is a marker
  return errorMarker(t) !== null;
}

/** A number followed by an optional unit: "344 MiB", "38 %", "74", "30.37 W", "42C". */
export function parseNumberWithUnit(cell: string | undefined): { value: number; unit: string } | null {
  if (cell === undefined || isMissing(cell)) return null;
  const t = cell.trim();
  if (t.length > 40) return null;
  const m = /^(-?\d+(?:\.\d+)?)\s*([A-Za-z%]*)$/.exec(t);
  if (!m) return null;
  const value = Number(m[1]);
  return Number.isFinite(value) ? { value, unit: m[2] } : null;
}

/** A plain number, unit ignored. */
export function parseNumberCell(cell: string | undefined): number | null {
  return parseNumberWithUnit(cell)?.value ?? null;
}

/** An integer such as an index or a PID. */
export function parseIntCell(cell: string | undefined): number | null {
  if (cell === undefined) return null;
  const t = cell.trim();
  return /^\d{1,15}$/.test(t) ? Number(t) : null;
}

const MIB_PER_UNIT: Record<string, number> = { '': 1, mib: 1, mb: 1, kib: 1 / 1024, kb: 1 / 1024, gib: 1024, gb: 1024, b: 1 / 1048576 };

/** A memory amount in MiB; nvidia-smi prints MiB, but tolerate KiB/GiB. */
export function parseMiBCell(cell: string | undefined): number | null {
  const p = parseNumberWithUnit(cell);
  if (!p) return null;
  const factor = MIB_PER_UNIT[p.unit.toLowerCase()];
  return factor === undefined ? null : p.value * factor;
}

/** Canonical PCI bus id for matching across outputs: "00000000:0B:00.0" and "0000:0b:00.0" agree. */
export function normalizeBusId(busId: string | null | undefined): string | null {
  if (!busId) return null;
  const m = /^([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-9A-Fa-f])$/.exec(busId.trim());
  if (!m) return null;
  return `${m[1].replace(/^0+(?=.)/, '')}:${m[2]}:${m[3]}.${m[4]}`.toUpperCase();
}
