// Untrusted pastes: every one gets a bounded-time answer and a clear message, never a crash or hang.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';
import { decodeLog } from '../../src/diagnose/input.js';
import { english } from '../../src/core/message.js';
import { flatView } from '../../src/diagnose/incident/index.js';

const base = await loadRuleBase();
const timed = <T>(f: () => T) => {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
};
// Bounds catch hangs and backtracking blow-ups (seconds to minutes), not speed: speed is `npm run bench`.
const HANG_BOUND_MS = 20_000;
const OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.10 GiB already allocated; 1.02 GiB free; 21.00 GiB reserved in total by PyTorch)';

describe('hostile and odd input', () => {
  it('empty input: no diagnosis', () => {
    expect(diagnose('', base).diagnoses).toEqual([]);
  });

  it('catastrophic-backtracking shapes finish within a bound', () => {
    const shapes = [
      'a'.repeat(200_000) + '!',
      '('.repeat(100_000),
      'CUDA out of memory. Tried to allocate ' + '9'.repeat(500_000),
      '--batch-size ' + ' '.repeat(300_000) + 'x',
      'memory: '.repeat(100_000),
      '\\'.repeat(200_000),
    ];
    for (const s of shapes) {
      const { ms } = timed(() => diagnose(s, base));
      expect(ms).toBeLessThan(HANG_BOUND_MS);
    }
  });

  it('a single 10 MB line with an OOM at the end is read and diagnosed', () => {
    const line = 'x'.repeat(10 * 1024 * 1024) + ' ' + OOM;
    const { value, ms } = timed(() => diagnose(line, base));
    expect(value.diagnoses[0]?.category).toBe('cuda_oom');
    expect(ms).toBeLessThan(HANG_BOUND_MS);
  });

  it('a 100 MB log keeps its last 16 MB and says so', () => {
    const buf = Buffer.alloc(100 * 1024 * 1024, 'step 1 loss 0.5\n');
    Buffer.from(OOM + '\n').copy(buf, buf.length - OOM.length - 1);
    const input = decodeLog(buf);
    expect(input.bytesRead).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(input.notes.map(english).join(' ')).toMatch(/The log is 100 MB; read its last 16 MB/);
    expect(diagnose(input.text, base).diagnoses[0]?.category).toBe('cuda_oom');
  });

  it('binary data and invalid UTF-8 are named, not crashed on', () => {
    const bin = decodeLog(Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7, 8]));
    expect(bin.binary).toBe(true);
    expect(bin.notes.map(english).join(' ')).toMatch(/binary/);
    const bad = decodeLog(Buffer.concat([Buffer.from(OOM), Buffer.from([0xc3, 0x28, 0xa0, 0xa1])]));
    expect(bad.notes.map(english).join(' ')).toMatch(/not valid UTF-8/);
    expect(diagnose(bad.text, base).diagnoses[0]?.category).toBe('cuda_oom');
  });

  it('the CLI: exit 0 with no diagnosis on chatter, 2 with one line on a usage error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-'));
    writeFileSync(join(dir, 'chat.log'), 'lunch at noon?\n');
    const out = JSON.parse(execFileSync('bin/gpu-doctor', ['diagnose', '--json', join(dir, 'chat.log')], { encoding: 'utf8' }));
    expect(out.diagnoses).toEqual([]);
    let err: { status: number; stderr: string } | undefined;
    try {
      execFileSync('bin/gpu-doctor', ['diagnose', '--bogus'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      err = e as { status: number; stderr: string };
    }
    expect(err?.status).toBe(2);
    expect(err?.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('what chat and launchers do to logs', () => {
  it('ANSI colours and [rank1]: prefixes', () => {
    const log = `\x1b[31m[rank1]: Traceback (most recent call last):\x1b[0m\n[rank1]:   File "train.py", line 3\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 79.15 GiB of which 4.81 MiB is free. Process 2395 has 79.14 GiB memory in use. Of the allocated memory 77.20 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.`;
    const [d] = diagnose(log, base).diagnoses;
    expect(flatView(d.incident)).toMatchObject({ gpuIndex: 1, triedAllocMiB: 20, freeMiB: 4.81, reservedUnallocatedMiB: 1228.8 });
  });

  it('two processes interleaved: each line still read on its own, the OOM facts from the OOM line', () => {
    // The other rank's bar is at its first steps: epochs or 50+ steps done would be evidence against the batch (levers/progress.ts).
    const log = [
      '[rank0]: Epoch 0:   1%|          | 10/1000 [00:05<08:15,  2.00it/s]',
      '[rank1]: Traceback (most recent call last):',
      '[rank0]: Epoch 0:   1%|          | 11/1000 [00:05<08:14,  2.00it/s]',
      '[rank1]:   File "train.py", line 88, in <module>',
      '[rank0]: Epoch 0:   1%|          | 12/1000 [00:06<08:14,  2.00it/s]',
      '[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 1 has a total capacity of 23.65 GiB of which 301.06 MiB is free. Including non-PyTorch memory, this process has 23.34 GiB memory in use. Of the allocated memory 22.10 GiB is allocated by PyTorch, and 790.20 MiB is reserved by PyTorch but unallocated.',
      '[rank0]: Epoch 0:   1%|          | 13/1000 [00:06<08:13,  2.00it/s]',
      'python train.py --per_device_train_batch_size 16',
    ].join('\n');
    const [d] = diagnose(log, base).diagnoses;
    expect(d.category).toBe('cuda_oom');
    expect(flatView(d.incident)).toMatchObject({ gpuIndex: 1, triedAllocMiB: 512, thisProcessMiB: 23900.16, batch: 16 });
    expect(d.fixes.find((f) => f.kind === 'reduce_batch')?.command).toBe('python train.py --per_device_train_batch_size 8 --gradient_accumulation_steps 2');
  });

  it('HTML entities and a hard-wrapped number', () => {
    const log =
      'RuntimeError: CUDA out of memory. Tried to allocate 2.0\n0 GiB (GPU 0; 10.76 GiB total capacity; 9.49 GiB already allocated; 13.44 MiB free; 9.63 GiB reserved in total by PyTorch) If reserved memory is &gt;&gt; allocated memory';
    const [d] = diagnose(log, base).diagnoses;
    expect(d.incident.figures.triedAllocMiB).toBe(2048);
    expect(d.incident.figures.reservedMiB).toBeCloseTo(9861.12, 1);
  });

  it('a tqdm bar glued to the next line', () => {
    const log = 'Epoch 1:  3%|▎ | 10/300 [00:05<02:10,  2.21it/s]RuntimeError: CUDA error: device-side assert triggered';
    expect(diagnose(log, base).diagnoses[0]?.category).toBe('device_assert_not_memory');
  });

  it('the last error weighs most: an NCCL timeout after an old OOM retry', () => {
    const log = [
      OOM,
      ...Array(200).fill('step ok'),
      '[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800012 milliseconds before timing out.',
    ].join('\n');
    expect(diagnose(log, base).diagnoses[0]?.category).toBe('nccl_or_distributed');
  });
});
