// nvtop's screen pasted beside a failure (smi-snapshot.ts): "Device N [name] ..." and, two lines on, its memory bar
// "MEM[|||  79.020Gi/80.000Gi]" (nvtop 1.x: "MEM[|| 3516Mi/11178Mi]"). SYNTHETIC lines written from nvtop's format.
import { describe, expect, it } from 'vitest';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { readSmiSnapshot } from '../../src/diagnose/smi-snapshot.js';

const log = (...lines: string[]) => new LogText(normalizeLog(lines.join('\n')));
const device = (n: number, name: string, mem: string) => [
  ` Device ${n} [${name}] PCIe GEN 3@16x RX: 0.000 KiB/s TX: 0.000 KiB/s`,
  ' GPU 1410MHz MEM 1512MHz TEMP  49°C FAN N/A% POW  75 / 300 W',
  ` GPU[||                              5%] MEM[|||||||||||||||||${mem}]`,
];

describe("nvtop's memory bar is read as the card's used and total memory", () => {
  it('two devices in Gi, one in Mi (nvtop 1.x)', () => {
    expect(readSmiSnapshot(log(...device(0, 'NVIDIA A100 80GB PCIe', '79.020Gi/80.000Gi'), ...device(1, 'NVIDIA A100 80GB PCIe', '0.512Gi/80.000Gi')))).toEqual(
      [
        { gpu: 0, usedMiB: 80916, totalMiB: 81920 },
        { gpu: 1, usedMiB: 524, totalMiB: 81920 },
      ],
    );
    expect(readSmiSnapshot(log(...device(2, 'GeForce GTX 1080 Ti', '   3516Mi/11178Mi')))).toEqual([{ gpu: 2, usedMiB: 3516, totalMiB: 11178 }]);
  });
  it('a header cut before its memory bar gives no card', () => {
    expect(readSmiSnapshot(log(' Device 0 [NVIDIA A100 80GB PCIe] PCIe GEN 3@16x'))).toEqual([]);
  });
});
