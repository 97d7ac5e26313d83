// Per-GPU health beside memory (what nvidia-smi -q, nvitop and dcgm-exporter show): power draw and cap,
// volatile uncorrected ECC errors, pages waiting to be retired, rows waiting to be remapped or failed to
// remap, and why the clocks are held down. Read from a separate `nvidia-smi --query-gpu=` (its own
// section of the status command) so a driver that does not know a field costs only these columns, never
// the memory reading. Field names: `nvidia-smi --help-query-gpu` (clocks_throttle_reasons.* became
// clocks_event_reasons.* in R535; remapped_rows.* exist on drivers that know row remapping, Ampere on).
// Pure and linear: one split per line, lines and cells capped.
import { isMissing, parseIntCell, parseNumberCell } from './cells.js';
import { MAX_GPUS, MAX_GPU_INDEX } from './limits.js';

/** Tried in this order until one is valid on the host's driver (newest names first). */
export const SMI_HEALTH_FIELD_SETS = [
  [
    'index',
    'power.draw',
    'power.limit',
    'ecc.errors.uncorrected.volatile.total',
    'retired_pages.pending',
    'remapped_rows.pending',
    'remapped_rows.failure',
    'clocks_event_reasons.active',
  ],
  [
    'index',
    'power.draw',
    'power.limit',
    'ecc.errors.uncorrected.volatile.total',
    'retired_pages.pending',
    'remapped_rows.pending',
    'remapped_rows.failure',
    'clocks_throttle_reasons.active',
  ],
  ['index', 'power.draw', 'power.limit', 'ecc.errors.uncorrected.volatile.total', 'retired_pages.pending', 'clocks_throttle_reasons.active'],
] as const;

/** Why clocks are held down, by NVML's clocks event reason bits (nvmlClocksEventReason*), as keys. */
export const CLOCK_REASON_BITS: readonly (readonly [bit: number, key: ClockReason])[] = [
  [0x1, 'gpu_idle'],
  [0x2, 'applications_clocks_setting'],
  [0x4, 'sw_power_cap'],
  [0x8, 'hw_slowdown'],
  [0x10, 'sync_boost'],
  [0x20, 'sw_thermal_slowdown'],
  [0x40, 'hw_thermal_slowdown'],
  [0x80, 'hw_power_brake_slowdown'],
  [0x100, 'display_clock_setting'],
];
export type ClockReason =
  | 'gpu_idle'
  | 'applications_clocks_setting'
  | 'sw_power_cap'
  | 'hw_slowdown'
  | 'sync_boost'
  | 'sw_thermal_slowdown'
  | 'hw_thermal_slowdown'
  | 'hw_power_brake_slowdown'
  | 'display_clock_setting';

export interface GpuHealth {
  powerDrawW: number | null;
  powerLimitW: number | null;
  /** Uncorrected ECC errors since the driver loaded; null where ECC is off or not supported. */
  eccUncorrectedVolatile: number | null;
  /** A page retirement waits for a reset (pre-Ampere ECC handling). */
  retiredPagesPending: boolean | null;
  /** A row remap waits for a reset (Ampere and later). */
  remappedRowsPending: boolean | null;
  /** A row could not be remapped: the memory has no spare rows left there. */
  remappedRowsFailure: boolean | null;
  /** Active clock event reasons; null when not reported. */
  clockReasons: ClockReason[] | null;
  /** The last Xid error code reported (dcgm-exporter's DCGM_FI_DEV_XID_ERRORS); 0 or absent: none. */
  lastXid?: number | null;
}

const MAX_HEALTH_LINE = 1024;

/** "Yes" / "No" (nvidia-smi's pending flags), anything else null. */
function yesNo(cell: string | undefined): boolean | null {
  if (isMissing(cell)) return null;
  const t = cell!.trim();
  return t === 'Yes' ? true : t === 'No' ? false : null;
}

/** A clock reason bitmask "0x0000000000000004" as keys; other text null. */
export function clockReasons(cell: string | undefined): ClockReason[] | null {
  if (isMissing(cell)) return null;
  const m = /^0x([0-9A-Fa-f]{1,16})$/.exec(cell!.trim());
  if (!m) return null;
  // The low 32 bits carry every reason named so far; parseInt on 16 hex digits would lose precision above 2^53.
  const low = parseInt(m[1].slice(-8), 16);
  return CLOCK_REASON_BITS.filter(([bit]) => (low & bit) !== 0).map(([, key]) => key);
}

const nonNegative = (n: number | null) => (n !== null && n >= 0 ? n : null);

/**
 * The health section of the status command: its first line names the field set that worked (one of
 * SMI_HEALTH_FIELD_SETS, joined by commas), the rest are that query's noheader,nounits rows. A first line
 * that is not one of those sets (the host said something else) gives no health at all.
 */
export function parseSmiHealth(text: string): Map<number, GpuHealth> {
  const out = new Map<number, GpuHealth>();
  const lines = text.split('\n', MAX_GPUS + 2);
  const fields = SMI_HEALTH_FIELD_SETS.find((set) => set.join(',') === lines[0]?.trim());
  if (!fields) return out;
  const at = (name: string) => (fields as readonly string[]).indexOf(name);
  const [idx, draw, limit, ecc, retired, remapPending, remapFailure] = [
    'index',
    'power.draw',
    'power.limit',
    'ecc.errors.uncorrected.volatile.total',
    'retired_pages.pending',
    'remapped_rows.pending',
    'remapped_rows.failure',
  ].map(at);
  const reasons = Math.max(at('clocks_event_reasons.active'), at('clocks_throttle_reasons.active'));
  for (const line of lines.slice(1)) {
    if (line.length > MAX_HEALTH_LINE) continue;
    const cells = line.split(',');
    if (cells.length !== fields.length) continue;
    const index = parseIntCell(cells[idx]);
    if (index === null || index > MAX_GPU_INDEX) continue;
    out.set(index, {
      powerDrawW: nonNegative(parseNumberCell(cells[draw])),
      powerLimitW: nonNegative(parseNumberCell(cells[limit])),
      eccUncorrectedVolatile: nonNegative(parseIntCell(cells[ecc])),
      retiredPagesPending: yesNo(cells[retired]),
      remappedRowsPending: remapPending < 0 ? null : yesNo(cells[remapPending]),
      remappedRowsFailure: remapFailure < 0 ? null : yesNo(cells[remapFailure]),
      clockReasons: clockReasons(cells[reasons]),
    });
  }
  return out;
}

/** What a GPU's health asks of its admins, most urgent first, as keys (the status reply words them). */
export type HealthFinding = 'remap_failure' | 'remap_pending' | 'retired_pages_pending' | 'ecc_uncorrected' | 'xid';

/** Xids NVIDIA's catalogue attributes to the application, not the GPU (13 graphics engine exception, 31 MMU fault, 43 stopped channel, 45 preemptive cleanup). */
export const APPLICATION_XIDS: ReadonlySet<number> = new Set([13, 31, 43, 45]);

export function healthFindings(
  h: Pick<GpuHealth, 'remappedRowsFailure' | 'remappedRowsPending' | 'retiredPagesPending' | 'eccUncorrectedVolatile' | 'lastXid'> | undefined,
): HealthFinding[] {
  if (!h) return [];
  const found: HealthFinding[] = [];
  if (h.remappedRowsFailure) found.push('remap_failure');
  if (h.remappedRowsPending) found.push('remap_pending');
  if (h.retiredPagesPending) found.push('retired_pages_pending');
  if ((h.eccUncorrectedVolatile ?? 0) > 0) found.push('ecc_uncorrected');
  if (h.lastXid && !APPLICATION_XIDS.has(h.lastXid)) found.push('xid');
  return found;
}
