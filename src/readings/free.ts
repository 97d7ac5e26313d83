// `free` output in every procps layout, returned in bytes:
//   old (procps 3.2):  total used free shared buffers cached  + "-/+ buffers/cache:" row
//   modern (3.3.10+):  total used free shared buff/cache available
//   wide (-w):         total used free shared buffers cache available
// Units: bare numbers (-b, -k default, -m, -g, --si ...) or human suffixes (-h: 3.9G, 119Gi, 1,9Gi).
// Values are split on whitespace, never by column offsets (12-digit -b values run together).
// Row labels may be translated ("Память:"), so the first labelled row after the header is Mem.
import type { HostMemoryReading } from './types.js';
import { tokens, toCleanLines } from './lines.js';
import { freeCommandUnits, type FreeUnits } from './free-command.js';
import { hostMemoryViolation, outOfRangeNote } from './ranges.js';
import type { ReadingNote } from './notes.js';

type Column = 'total' | 'used' | 'free' | 'shared' | 'buffers' | 'cache' | 'buffcache' | 'available';

const HEADER_WORDS: Record<string, Column> = {
  total: 'total',
  used: 'used',
  free: 'free',
  shared: 'shared',
  buffers: 'buffers',
  cache: 'cache',
  cached: 'cache',
  'buff/cache': 'buffcache',
  available: 'available',
};
/** Column layouts by count, for headers we cannot read (translated). */
const LAYOUT_BY_COUNT: Record<number, Column[]> = {
  3: ['total', 'used', 'free'],
  5: ['total', 'used', 'free', 'shared', 'buffers'],
  6: ['total', 'used', 'free', 'shared', 'buffcache', 'available'],
  7: ['total', 'used', 'free', 'shared', 'buffers', 'cache', 'available'],
};
const OLD_LAYOUT: Column[] = ['total', 'used', 'free', 'shared', 'buffers', 'cache'];
/** Mem row labels recognised without a header above them (seen in real outputs: fixtures 19 and the English ones). */
const MEM_LABELS = new Set(['mem', 'память']);
const OTHER_LABELS = new Set(['total', 'low', 'high', 'comm']);
const VALUE = /^(\d{1,20})(?:[.,](\d{1,6}))?(?:([BKMGTPE])(i?))?$/;

interface Row {
  label: string;
  values: string[];
}

interface Block {
  header: Column[] | null;
  mem: Row;
  buffersCacheRow: Row | null;
  swap: Row | null;
  units: FreeUnits;
  unitsFromCommand: boolean;
}

/**
 * The last `free` output in the text, or null. A Mem row with a value out of range is left out (the
 * output before it counts) and named in `notes`.
 */
export function parseFree(text: string, units?: FreeUnits, notes?: ReadingNote[]): HostMemoryReading | null {
  return parseFreeLines(toCleanLines(text), units, notes);
}

export function parseFreeLines(lines: string[], units?: FreeUnits, notes?: ReadingNote[]): HostMemoryReading | null {
  let reading: HostMemoryReading | null = null;
  let currentUnits: FreeUnits = units ?? {};
  let fromCommand = units?.unitBytes !== undefined;
  let block: Block | null = null;

  const finish = () => {
    const read = block && toReading(block);
    const bad = read && hostMemoryViolation(read);
    if (bad) notes?.push(outOfRangeNote('free', block!.mem.label, bad));
    else if (read) reading = read;
    block = null;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const command = freeCommandUnits(line);
    if (command) {
      finish();
      currentUnits = command;
      fromCommand = true;
      continue;
    }
    const row = labelledRow(line);
    if (!row) {
      finish();
      continue;
    }
    const label = row.label.toLowerCase();
    if (block && label.startsWith('-/+')) {
      block.buffersCacheRow = row;
    } else if (block && !block.swap && row.values.length <= 3 && !OTHER_LABELS.has(label)) {
      // Swap, whatever its label says ("Swap:", "Подкачка:"): the short row after Mem.
      block.swap = row;
    } else if (row.values.length >= 3 && !OTHER_LABELS.has(label) && label !== 'swap') {
      // A Mem row: its label says so, or the line above is a header with as many columns.
      const header = i > 0 ? headerColumns(lines[i - 1]) : undefined;
      const fits = header !== undefined && (header ?? LAYOUT_BY_COUNT[row.values.length])?.length === row.values.length;
      if (MEM_LABELS.has(label) || fits) {
        finish();
        block = { header: header ?? null, mem: row, buffersCacheRow: null, swap: null, units: currentUnits, unitsFromCommand: fromCommand };
      }
    }
  }
  finish();
  return reading;
}

/** "Mem:   1877   859 ..." / "-/+ buffers/cache:  231  1645" / "Подкачка:  4,0Gi ..." (at most 7 values, as free -w prints). */
function labelledRow(line: string): Row | null {
  const colon = line.indexOf(':');
  if (colon < 0 || colon > 40) return null;
  const label = line.slice(0, colon).trim();
  const values = tokens(line.slice(colon + 1));
  if (label === '' || values.length > 7) return null;
  return values.length && values.every((v) => VALUE.test(v)) ? { label, values } : null;
}

/** Columns of a header line; null for a header-like line we cannot read (translated); undefined if not header-like. */
function headerColumns(line: string): Column[] | null | undefined {
  const words = tokens(line);
  if (words.length < 3 || words.length > 7 || line.includes(':') || words.some((w) => w.length > 20 || /\d/.test(w))) return undefined;
  const columns = words.map((w) => HEADER_WORDS[w.toLowerCase()]);
  return columns.every((c) => c !== undefined) ? columns : null;
}

function toReading(block: Block): HostMemoryReading | null {
  const layout = chooseLayout(block);
  const { units, inferred } = resolveUnits(block, layout);
  const mem = new Map<Column, number>();
  let resolution: number | undefined;
  layout.forEach((column, i) => {
    const v = block.mem.values[i] === undefined ? null : toBytes(block.mem.values[i], units);
    if (v) mem.set(column, v.bytes);
    if (v && column === 'total') resolution = v.resolution;
  });
  const total = mem.get('total');
  if (total === undefined) return null;
  const get = (c: Column) => mem.get(c) ?? null;
  const buffCache = mem.has('buffcache') ? get('buffcache') : mem.has('buffers') || mem.has('cache') ? (get('buffers') ?? 0) + (get('cache') ?? 0) : null;
  let available = get('available');
  if (available === null && block.buffersCacheRow) {
    // Old layout: "-/+ buffers/cache:  used  free" - its free column is what is available.
    available = toBytes(block.buffersCacheRow.values[1] ?? '', units)?.bytes ?? null;
  }
  // Old layout without a "-/+" row (free -o, busybox): free + buffers + cached.
  if (available === null && !layout.includes('available') && buffCache !== null) available = (get('free') ?? 0) + buffCache;
  const swapTotal = block.swap ? (toBytes(block.swap.values[0], units)?.bytes ?? null) : null;
  const swapUsed = block.swap && block.swap.values[1] ? (toBytes(block.swap.values[1], units)?.bytes ?? null) : null;
  const reading: HostMemoryReading = {
    totalBytes: total,
    usedBytes: get('used'),
    availableBytes: available,
    freeBytes: get('free'),
    swapTotalBytes: swapTotal,
    swapUsedBytes: swapUsed,
    sharedBytes: get('shared'),
    buffCacheBytes: buffCache,
  };
  if (resolution !== undefined) reading.resolutionBytes = resolution;
  if (inferred) reading.unitInferred = true;
  return reading;
}

function chooseLayout(block: Block): Column[] {
  const n = block.mem.values.length;
  if (block.header && block.header.length === n) return block.header;
  if (n === 6 && block.buffersCacheRow) return OLD_LAYOUT;
  return LAYOUT_BY_COUNT[n] ?? LAYOUT_BY_COUNT[6].slice(0, n);
}

/** Bytes of one bare unit: from the command line when pasted, else from the numbers' size. */
function resolveUnits(block: Block, layout: Column[]): { units: FreeUnits; inferred: boolean } {
  const bare = block.mem.values.every((v) => /^\d+$/.test(v));
  if (block.unitsFromCommand || !bare) return { units: block.units, inferred: false };
  const values = block.mem.values.map(Number);
  const total = values[layout.indexOf('total')] ?? values[0];
  const sharedAt = layout.indexOf('shared');
  const shared = sharedAt >= 0 ? values[sharedAt] : undefined;
  return { units: { ...block.units, unitBytes: guessBareUnit(total, values, shared, layout.includes('available')) }, inferred: true };
}

/**
 * -b values are whole KiB (all divisible by 1024). Plain `free` prints KiB, and on any modern
 * system shared memory (tmpfs) is well above 100 KiB, so "shared 3" means MiB. Totals under 512
 * are read as GiB (-g on a server) rather than MiB of a sub-512 MiB box.
 */
function guessBareUnit(total: number, values: number[], shared: number | undefined, modern: boolean): number {
  const KiB = 1024;
  if (total >= 2 ** 26 && values.every((v) => v % KiB === 0)) return 1;
  const sharedTooSmallForKiB = modern && shared !== undefined && shared < 100;
  if (total >= 2 ** 16 && total <= 2 ** 36 && !sharedTooSmallForKiB) return KiB;
  if (total >= 512 && total <= 2 ** 26) return KiB ** 2;
  return KiB ** 3;
}

/** "1877" (in unitBytes), "3.9G", "1,9Gi", "256Ki", "0B" -> bytes and the size of the last printed digit. */
function toBytes(token: string, units: FreeUnits): { bytes: number; resolution: number } | null {
  const m = VALUE.exec(token);
  if (!m) return null;
  const fraction = m[2] ?? '';
  const value = Number(`${m[1]}${fraction ? '.' + fraction : ''}`);
  let unit: number;
  if (m[3] === undefined) unit = units.unitBytes ?? 1024;
  else {
    const power = 'BKMGTPE'.indexOf(m[3]);
    const base = m[4] === 'i' || !units.si ? 1024 : 1000;
    unit = base ** power;
  }
  return { bytes: Math.round(value * unit), resolution: unit / 10 ** fraction.length };
}
