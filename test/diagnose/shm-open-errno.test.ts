// ATen's MapAllocator prints shm_open's errno: "unable to open shared memory object <name> in read-write mode: <strerror>
// (<errno>)". ENOENT (2: the segment was already unlinked, under the file_system sharing strategy or by a cleaner of
// /dev/shm) and EACCES (13) say nothing about room in /dev/shm; the errno-less message of old releases and ENOSPC writes
// still read as a full /dev/shm. Real log: blind8/5669 (read split, confuser); variants from the format (synthetic).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("shm_open's errno decides whether /dev/shm is full", () => {
  it('real blind8/5669 (ENOENT under file_system sharing, 63 GB /dev/shm): not shm exhaustion', async () => {
    const d = await firstOfCase('blind8', '5669');
    expect(d?.category).not.toBe('shm_exhausted');
  });

  // synthetic: the message with errnos that are not about space
  it.each([
    ['ENOENT', 'RuntimeError: unable to open shared memory object </torch_4711_1234567_3> in read-write mode: No such file or directory (2)'],
    ['ENOENT rank', '[rank1]: RuntimeError: unable to open shared memory object </torch_99_42_0> in read-write mode: No such file or directory (2)'],
    ['EACCES', 'RuntimeError: unable to open shared memory object </torch_12_34_5> in read-write mode: Permission denied (13)'],
  ])('synthetic: %s is not a full /dev/shm', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category ?? 'none').not.toBe('shm_exhausted');
  });

  // synthetic: forms that still say /dev/shm ran out
  it.each([
    ['no errno (old torch)', 'RuntimeError: unable to open shared memory object </torch_31124_2696026929> in read-write mode'],
    ['ENOSPC write', 'RuntimeError: unable to write to file </torch_18_2440226563_0>: No space left on device (28)'],
  ])('synthetic: %s is still shm', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
  });
});
