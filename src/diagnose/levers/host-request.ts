// One host allocation larger than the machine's RAM (issue 23). PyTorch's CPU allocator and NumPy name the size of the
// one request that failed ("DefaultCPUAllocator: not enough memory: you tried to allocate 65641881600 bytes", NumPy's
// "Unable to allocate 61.1 GiB for an array with shape (2600, 1080, 1920, 3)"): a single tensor or array of that size is
// the whole data, or one long input (every frame of a video, a whole volume), materialised at once. When it is as large
// as the RAM the paste states (or, none stated, HOST_REQUEST_UNSTATED_MIB, more than most machines have), no page file
// or swap makes it practical and no DataLoader worker count changes it: load part of it, downscale it, or stream it in
// chunks. Read per line, bounded: linear.
import { formatMiB } from '../fixes/arithmetic.js';
import type { HostPart, Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';

export type HostRequestFacts = Pick<HostPart, 'hostRequestMiB' | 'hostRequest'>;

const MAX_LINES = 20_000;
const MAX_LINE = 1200;
/** With no RAM stated: the common 16 GB of the desktops that paste such logs; no single weight tensor comes near it. */
const HOST_REQUEST_UNSTATED_MIB = 16 * 1024;
const UNIT_MIB: Record<string, number> = { B: 2 ** -20, KiB: 2 ** -10, MiB: 1, GiB: 1024, TiB: 2 ** 20 };

const TORCH_CPU = /DefaultCPUAllocator: (?:not enough memory|can't allocate memory): you tried to allocate (\d{1,16}) bytes/;
// PaddlePaddle's CPU allocator: "(ResourceExhausted) Fail to alloc memory of 4165888745472 size, error code is 12" (errno 12, ENOMEM).
const PADDLE_CPU = /Fail to alloc memory of (\d{1,16}) size, error code is 12\b/;
const NUMPY = /Unable to allocate (\d{1,6}(?:\.\d{0,3})?) (B|KiB|MiB|GiB|TiB) for an array with shape (\([\d, ]{1,80}\))/;

/** The largest single host request the paste's allocator messages name, and how the reply quotes it. */
export function readHostRequest(text: string): HostRequestFacts {
  let best: { mib: number; quote: string } | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!line) continue;
    const torch = TORCH_CPU.exec(line) ?? PADDLE_CPU.exec(line);
    const numpy = torch ? null : NUMPY.exec(line);
    const mib = torch ? Number(torch[1]) / 2 ** 20 : numpy ? Number(numpy[1]) * UNIT_MIB[numpy[2]] : undefined;
    if (mib === undefined || (best && best.mib >= mib)) continue;
    best = { mib, quote: numpy ? `${formatMiB(mib)}, an array of shape ${numpy[3]}` : formatMiB(mib) };
  }
  return best ? { hostRequestMiB: Math.round(best.mib), hostRequest: best.quote } : {};
}

/** The one failed host request is at least the stated RAM (or, none stated, HOST_REQUEST_UNSTATED_MIB). */
export function hostRequestOverRam(f: Incident): boolean {
  const req = f.host.hostRequestMiB;
  if (req === undefined) return false;
  return req >= (f.host.hostRamGiB !== undefined ? f.host.hostRamGiB * 1024 : HOST_REQUEST_UNSTATED_MIB);
}

/**
 * One host request of a tebibyte or more (and above the RAM the paste states): no workstation or cloud node gives one
 * array that much, so the size itself is garbage (an overflowed or uninitialised shape, a wrong dimension order), as an
 * absurd GPU request is (cuda-oom-absurd-request). Not capacity: no RAM, swap or worker count answers it.
 */
const HOST_REQUEST_ABSURD_MIB = 2 ** 20;
export function hostRequestAbsurd(f: Incident): boolean {
  const req = f.host.hostRequestMiB;
  if (req === undefined || req < HOST_REQUEST_ABSURD_MIB) return false;
  return f.host.hostRamGiB === undefined || req > f.host.hostRamGiB * 1024;
}
