// Whether a chat message is taken for a pasted log (src/core/paste.ts): each sign of a log counts on its own and
// a near miss does not, one sign needs a message of three lines or 160 characters, two signs need nothing more,
// and a message over twice the read window is judged on its first and last 128 KiB only. Written against the
// mutants Stryker found alive (npm run test:mutation); the adapters' tests cover the same check end to end.
import { describe, expect, it } from 'vitest';
import { looksLikeLog } from '../../src/core/paste.js';

/** A short three-line message around one line: three lines is enough for one sign to make it a log. */
const threeLines = (line: string) => `step 1\n${line}\nstep 2`;
/** The window read at each end of a long message (paste.ts: its first and last 128 KB). */
const WINDOW = 128 * 1024;

describe('each sign of a log counts, its near misses do not', () => {
  const cases: [string, string[], string[]][] = [
    ['a Python traceback', ['Traceback (most recent call last):'], ['Traceback (most recent call first):', 'Traceback most recent call last']],
    [
      'an exception name',
      ['ValueError: bad shape', 'xError: bad', '  at torch.OutOfMemoryError: CUDA'],
      ['Error: bad shape', 'ValueError bad shape', 'Value-Error without colon'],
    ],
    ['out of memory, in any case', ['out of memory', 'CUDA OUT OF MEMORY.'], ['out of  memory', 'outofmemory']],
    ['the kernel killing a process', ['Killed', 'bash: line 1: 4242 Killed python train.py'], ['Killedx', 'xKilled', 'killed']],
    [
      'NCCL',
      ['NCCL WARN Call to connect returned', 'NCCL INFO Bootstrap', 'NCCL error: unhandled', 'ProcessGroupNCCL.cpp:1123'],
      ['NCCL DEBUG', 'NCCL warn', 'ProcessGroup NCCL'],
    ],
    ['nvidia-smi output', ['| NVIDIA-SMI 535.104.05', 'nvidia-smi failed', 'Driver Version: 535.104.05'], ['NVIDIA SMI', 'Driver Version 535', 'nvidia smi']],
    ['free output', ['Mem:       515895      21467', '   Mem: 1', 'Memory: 12', 'Mem:\t7'], ['xMem: 1', 'Mem:1', 'Mem: x', 'Memo: 1', 'mem: 1']],
    [
      'CUDA library errors, in any case',
      ['CUDA error: an illegal memory access', 'cuda ERROR', 'CUBLAS_STATUS_ALLOC_FAILED', 'CUDNN_STATUS_NOT_SUPPORTED', 'Device-side assert triggered'],
      ['CUDA-error', 'CUBLAS STATUS', 'CUDNN-STATUS', 'device side assert'],
    ],
    [
      'shared memory, in any case',
      ['Bus error (core dumped)', 'unable to write to file </torch_1_2>: No space left in SHARED MEMORY', 'df /dev/shm'],
      ['bus  error', 'sharedmemory', '/dev/sh', 'dev/shm'],
    ],
    ['a memory column or figure', ['GPU_mem 12.3G', 'memory: 123', 'peak memory: 40960 MiB'], ['GPU_MEM 12.3G', 'memory: 12', 'xmemory: 123', 'memory:123']],
  ];
  for (const [what, signs, misses] of cases) {
    it(what, () => {
      for (const line of signs) expect(looksLikeLog(threeLines(line)), line).toBe(true);
      for (const line of misses) expect(looksLikeLog(threeLines(line)), line).toBe(false);
    });
  }

  it('ordinary chatter of any length is no log', () => {
    expect(looksLikeLog('')).toBe(false);
    expect(looksLikeLog(threeLines('does anyone know why the queue is slow today?'))).toBe(false);
    expect(looksLikeLog('lunch? '.repeat(100))).toBe(false);
  });
});

describe('how much a message needs besides its signs', () => {
  it('one sign on one or two short lines is chatter; on three lines it is a log', () => {
    expect(looksLikeLog('got out of memory again')).toBe(false);
    expect(looksLikeLog('got out of memory\nagain')).toBe(false);
    expect(looksLikeLog('got out of memory\nagain\n')).toBe(true);
    expect(looksLikeLog('got\nout of memory\nagain\nand again')).toBe(true);
  });

  it('one sign on one line is a log from 160 characters on', () => {
    const sign = 'out of memory';
    expect(looksLikeLog(sign + ' '.repeat(159 - sign.length))).toBe(false);
    expect(looksLikeLog(sign + ' '.repeat(160 - sign.length))).toBe(true);
  });

  it('two signs make a log on one short line, none never does', () => {
    expect(looksLikeLog('Killed: out of memory')).toBe(true);
    expect(looksLikeLog('x'.repeat(500))).toBe(false);
    expect(looksLikeLog('a\nb\nc\nd\ne')).toBe(false);
  });
});

describe('a long message is read at its two ends only', () => {
  const sign = 'out of memory';
  /** A one-line message of `length` characters with the sign starting at `at`. */
  const withSignAt = (length: number, at: number) => 'a'.repeat(at) + sign + 'a'.repeat(length - at - sign.length);

  it('a sign in the middle of a message over twice the window is not read; at exactly twice it is', () => {
    expect(looksLikeLog(withSignAt(2 * WINDOW + 1, WINDOW))).toBe(false);
    expect(looksLikeLog(withSignAt(2 * WINDOW, WINDOW))).toBe(true);
  });

  it('the first window ends at its last character', () => {
    const length = 3 * WINDOW;
    expect(looksLikeLog(withSignAt(length, WINDOW - sign.length))).toBe(true);
    expect(looksLikeLog(withSignAt(length, WINDOW - sign.length + 1))).toBe(false);
  });

  it('the last window starts its last 128 KiB', () => {
    const length = 3 * WINDOW;
    expect(looksLikeLog(withSignAt(length, length - WINDOW))).toBe(true);
    expect(looksLikeLog(withSignAt(length, length - WINDOW - 1))).toBe(false);
    expect(looksLikeLog(withSignAt(length, length - sign.length))).toBe(true);
  });
});
