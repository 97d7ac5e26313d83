// Files named on the command line (a log to diagnose, samples, a rule's example) are read only when they
// are regular files, and no further than a cap: /dev/zero never ends, a FIFO blocks its reader until a
// writer comes, and a stat of the path before opening it could be answered by another file than the one
// opened. So: open without blocking (O_NONBLOCK: a FIFO opens at once), fstat the descriptor that was
// opened, refuse anything that is not a regular file in one line, and read at most the cap.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** A refusal in one line naming the path (cut short, printable). */
export class FileRefused extends Error {}

const shown = (path: string) => path.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

/** An open descriptor of `path`, which is a regular file; the caller closes it (or hands it to a stream that does). */
export function openRegularFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new FileRefused(code === 'ENOENT' ? `no such file: ${shown(path)}` : `cannot read ${shown(path)} (${code ?? 'error'})`);
  }
  let regular = false;
  try {
    regular = fstatSync(fd).isFile();
  } finally {
    if (!regular) closeSync(fd);
  }
  if (!regular) throw new FileRefused(`not a regular file: ${shown(path)}`);
  return fd;
}

/** At most `maxBytes` of a regular file; `over` when it holds more (one byte past the cap is read to tell). */
export function readRegularFileCapped(path: string, maxBytes: number): { data: Buffer; over: boolean } {
  const fd = openRegularFile(path);
  try {
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (;;) {
      const got = n < buf.length ? readSync(fd, buf, n, buf.length - n, null) : 0;
      if (got === 0) break;
      n += got;
    }
    return { data: buf.subarray(0, Math.min(n, maxBytes)), over: n > maxBytes };
  } finally {
    closeSync(fd);
  }
}
