// The status command's health section: power, ECC, pending retirements / remaps and clock reasons from
// `nvidia-smi --query-gpu=` rows of real cards (src/readings/nvidia-smi-health.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockReasons, healthFindings, parseSmiHealth, SMI_HEALTH_FIELD_SETS } from '../../src/readings/nvidia-smi-health.js';
import { MAX_GPUS } from '../../src/readings/limits.js';

const fixtures = join(import.meta.dirname, '../fixtures');
const [NEWEST, , OLDEST] = SMI_HEALTH_FIELD_SETS;

/** The named fields of a real `--format=csv` capture's data row (header and row as nvidia-smi printed them). */
function rowOf(file: string, names: readonly string[]): string {
  const [header, row] = readFileSync(join(fixtures, file), 'utf8').split('\n');
  const fields = header.split(',').map((h) => h.trim().replace(/ \[.*\]$/, ''));
  const cells = row.split(',').map((c) => c.trim());
  return names.map((n) => cells[fields.indexOf(n)]).join(', ');
}

describe('GPU health query', () => {
  it('reads a real H100 under load (driver 590, clocks_event_reasons): power, ECC 0, no pending remap, no clock reason', () => {
    const row = rowOf('prometheus/nvidia-smi-h100-load-query-gpu.csv', NEWEST);
    expect(row).toBe('0, 631.95 W, 700.00 W, 0, [N/A], No, No, 0x0000000000000000');
    const h = parseSmiHealth(`${NEWEST.join(',')}\n${row}\n`).get(0);
    expect(h).toEqual({
      powerDrawW: 631.95,
      powerLimitW: 700,
      eccUncorrectedVolatile: 0,
      retiredPagesPending: null,
      remappedRowsPending: false,
      remappedRowsFailure: false,
      clockReasons: [],
    });
    expect(healthFindings(h)).toEqual([]);
  });

  it('reads a real consumer card on driver 465 (the oldest field list): no ECC, idle clocks', () => {
    const row = rowOf('readings/nvidia-smi/03-rtx2080super-query-gpu-allfields-465.csv', OLDEST);
    expect(row).toBe('0, 30.37 W, 250.00 W, [N/A], [N/A], 0x0000000000000001');
    expect(parseSmiHealth(`${OLDEST.join(',')}\n${row}`).get(0)).toEqual({
      powerDrawW: 30.37,
      powerLimitW: 250,
      eccUncorrectedVolatile: null,
      retiredPagesPending: null,
      remappedRowsPending: null,
      remappedRowsFailure: null,
      clockReasons: ['gpu_idle'],
    });
  });

  it('synthetic rows: [Not Supported] and N/A read as unknown, Yes flags, and an ECC count flags the GPU', () => {
    // Synthetic (shaped as the real rows above): a card that does not support power readings, and a faulty one.
    const text = [NEWEST.join(','), '0, [Not Supported], [Not Supported], N/A, No, No, No, [N/A]', '1, 300.5, 700, 3, Yes, Yes, Yes, 0x0000000000000044'].join(
      '\n',
    );
    const health = parseSmiHealth(text);
    expect(health.get(0)).toMatchObject({ powerDrawW: null, powerLimitW: null, eccUncorrectedVolatile: null, clockReasons: null });
    expect(health.get(1)).toMatchObject({ eccUncorrectedVolatile: 3, retiredPagesPending: true, remappedRowsPending: true, remappedRowsFailure: true });
    expect(health.get(1)!.clockReasons).toEqual(['sw_power_cap', 'hw_thermal_slowdown']);
    expect(healthFindings(health.get(1))).toEqual(['remap_failure', 'remap_pending', 'retired_pages_pending', 'ecc_uncorrected']);
  });

  it('an Xid flags the GPU unless NVIDIA attributes it to the application', () => {
    const clean = { remappedRowsFailure: null, remappedRowsPending: null, retiredPagesPending: null, eccUncorrectedVolatile: null };
    expect(healthFindings({ ...clean, lastXid: 79 })).toEqual(['xid']);
    expect(healthFindings({ ...clean, lastXid: 13 })).toEqual([]);
    expect(healthFindings({ ...clean, lastXid: 0 })).toEqual([]);
    expect(healthFindings(undefined)).toEqual([]);
  });

  it('clock reason masks: every NVML bit by name, high bits and text ignored', () => {
    expect(clockReasons('0x00000000000001FF')).toHaveLength(9);
    expect(clockReasons('0x0000000100000008')).toEqual(['hw_slowdown']);
    expect(clockReasons('Active')).toBeNull();
    expect(clockReasons('[N/A]')).toBeNull();
  });

  it('gives nothing when the first line is not a field list it asked for, and reads no row that does not fit', () => {
    expect(parseSmiHealth('Field "remapped_rows.pending" is not a valid field to query.\n').size).toBe(0);
    expect(parseSmiHealth(`index,power.draw\n0, 10`).size).toBe(0);
    const rows = parseSmiHealth(
      [NEWEST.join(','), '0, 1, 2', 'x, 1, 2, 0, No, No, No, 0x0', `2000, 1, 2, 0, No, No, No, 0x0`, `3, 1, 2, 0, No, No, No, 0x0`].join('\n'),
    );
    expect([...rows.keys()]).toEqual([3]);
    const many = [NEWEST.join(','), ...Array.from({ length: MAX_GPUS + 50 }, (_, i) => `${i % 1000}, 1, 2, 0, No, No, No, 0x0`)].join('\n');
    expect(parseSmiHealth(many).size).toBeLessThanOrEqual(MAX_GPUS);
  });
});
