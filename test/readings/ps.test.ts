// The status command's ps section: `ps -o pid=,user=,etimes=,pcpu=,rss=,args=` (procps-ng) lines.
import { describe, expect, it } from 'vitest';
import { parsePs, MAX_PS_LINES } from '../../src/readings/ps.js';
import { rssCell, runTime } from '../../src/hosts/render.js';
import { PS_FORMAT_ARGS } from '../../src/hosts/remote-commands.js';

describe('ps section', () => {
  it('the status command asks ps for run time, CPU % and RSS before the command line', () => {
    expect(PS_FORMAT_ARGS).toEqual(['-o', 'pid=,user=,etimes=,pcpu=,rss=,args=']);
  });

  it('reads pid, user, run time, CPU %, RSS (KiB to bytes) and the command line', () => {
    // Shaped as procps-ng 4 prints these columns (right-aligned numbers, %CPU with one decimal, past 999.9 without).
    const rows = parsePs(
      [
        ' 1328667 alice       3600 97.5 20971520 python -m vllm.entrypoints.openai.api_server --tp 8',
        '    4242 bob           45 1234 1048576 torchrun --nproc_per_node 8 train.py',
        '      77 root           -    -       - [kthreadd]',
      ].join('\n'),
    );
    expect(rows.get(1328667)).toEqual({
      pid: 1328667,
      user: 'alice',
      elapsedSeconds: 3600,
      cpuPct: 97.5,
      rssBytes: 20 * 2 ** 30,
      args: 'python -m vllm.entrypoints.openai.api_server --tp 8',
    });
    expect(rows.get(4242)).toMatchObject({ cpuPct: 1234, rssBytes: 2 ** 30, args: 'torchrun --nproc_per_node 8 train.py' });
    expect(rows.get(77)).toMatchObject({ elapsedSeconds: null, cpuPct: null, rssBytes: null, args: '[kthreadd]' });
  });

  it('a line of the earlier four-column format still reads, with CPU and RSS unknown', () => {
    expect(parsePs('    4242 root  60 python train.py').get(4242)).toMatchObject({
      user: 'root',
      elapsedSeconds: 60,
      cpuPct: null,
      rssBytes: null,
      args: 'python train.py',
    });
  });

  it('skips lines that are not rows and reads no further than its line cap', () => {
    expect(parsePs('ps: error: unknown user-defined format specifier "pcpu"\n').size).toBe(0);
    const many = Array.from({ length: MAX_PS_LINES + 10 }, (_, i) => `${i + 1} u 1 0.0 1 x`).join('\n');
    expect(parsePs(many).size).toBe(MAX_PS_LINES);
    expect(parsePs(`1 u 1 0.0 1 ${'x'.repeat(10_000)}`).size).toBe(0);
  });

  it('run time and RSS cells read at a glance', () => {
    expect([0, 45, 60, 3599, 3600, 3660 + 5, 86399, 86400, 90000, null, -1].map(runTime)).toEqual([
      '0s',
      '45s',
      '1m',
      '59m',
      '1h00m',
      '1h01m',
      '23h59m',
      '1d00h',
      '1d01h',
      'n/a',
      'n/a',
    ]);
    expect([512 * 2 ** 20, 2 ** 30, 20.25 * 2 ** 30, null].map(rssCell)).toEqual(['512 MiB', '1.0 GiB', '20.3 GiB', 'n/a']);
  });
});
