// One poll of a host whose GPU 1 is a training job filling `usedGiB` of 80 GiB (98% by default): the
// readings the threshold alerts' card_full rule sees, for the restart and replica tests.
import type { Sample } from '../../src/watch/types.js';

export const MIN = 60_000;
export const T0 = Date.parse('2026-11-20T08:00:00Z');

export function fullCardPoll(minute: number, usedGiB = 78.5, host = 'gpu1'): Sample[] {
  const ts = T0 + minute * MIN;
  return [
    {
      ts,
      host,
      gpu: 1,
      gpuTotalMiB: 80 * 1024,
      gpuUsedMiB: usedGiB * 1024,
      utilizationPct: 95,
      pid: 777,
      processStart: T0 - 7_200_000,
      user: 'bob',
      command: 'torchrun train.py',
      processMiB: usedGiB * 1024 - 500,
    },
  ];
}
