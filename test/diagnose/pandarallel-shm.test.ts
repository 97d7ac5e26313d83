// pandarallel hands its workers' chunks over as pickle files in its memory file system, /dev/shm (pandarallel/core.py
// MEMORY_FS_ROOT): ENOSPC raised there is /dev/shm full, not the disk (issue 23, shm). Synthetic variants written from
// pandarallel's own lines (its INFO line, its 1.5 message, its frames in both releases' layouts, its file names),
// beside the real blind9 thread; a near miss told to use pipes is not this rule.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const ENOSPC = 'OSError: [Errno 28] No space left on device';

describe("pandarallel's memory file system: /dev/shm, use_memory_fs=False", () => {
  it.each([
    [
      'its INFO line, then the error',
      `INFO: Pandarallel will run on 8 workers.\nINFO: Pandarallel will use Memory file system to transfer data between the main process and workers.\n${ENOSPC}`,
    ],
    [
      'its 1.6 frame',
      `Traceback (most recent call last):\n  File "/usr/lib/python3.10/site-packages/pandarallel/core.py", line 263, in closure\n    pickle.dump(chunk, filedescriptor)\n${ENOSPC}`,
    ],
    [
      'its 1.5 frame in a worker',
      `  File "/anaconda/lib/python3.8/site-packages/pandarallel/pandarallel.py", line 120, in wrapper\n    pickle.dump(result, file)\n${ENOSPC}`,
    ],
    [
      "IPython's frame layout",
      `/opt/conda/lib/python3.9/site-packages/pandarallel/pandarallel.py in dump_and_get_lenght(chunk, input_file)\n--> 244             pickle.dump(chunk, file)\n${ENOSPC}`,
    ],
    [
      'its own 1.5 message',
      "OSError: It seems you use Memory File System and you don't have enough available space in `dev/shm`. You can either call pandarallel.initalize with `use_memory_fs=False`",
    ],
    ['its file named in the error', "OSError: [Errno 28] No space left on device: '/dev/shm/pandarallel_output_k2j4x.pickle'"],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/pandarallel.*\/dev\/shm/);
    expect(first(d)).toMatch(/use_memory_fs=False/);
  });
  it('synthetic near miss: pandarallel told to use pipes, the disk full elsewhere: not this rule', async () => {
    const d = await diagnosePaste(
      `pandarallel.initialize(nb_workers=8, use_memory_fs=False)\n  File "/usr/lib/python3.10/site-packages/pandarallel/core.py", line 300, in closure\n${ENOSPC}`,
    );
    expect(d?.rule).not.toBe('pandarallel-memory-fs');
  });
  it('real thread (blind9/5716, Open-Sora bucket building): /dev/shm, not the 16 TB disk', async () => {
    const d = await firstOfCase('blind9', '5716');
    expect(d?.rule).toBe('pandarallel-memory-fs');
    expect(first(d)).toMatch(/\/dev\/shm/);
  });
});
