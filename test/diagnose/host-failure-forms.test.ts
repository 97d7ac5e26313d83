// Principle (issue 23, recognition): a host allocation failure is read in the forms a report gives it, not only as the
// full message. PyTorch's CPU allocator has one enforce, the allocation that failed, so "enforce fail at CPUAllocator.cpp"
// (or alloc_cpu.cpp, its later file) named alone in a title or a sentence is a host OOM. An item of a numbered or bulleted
// list is a hypothesis when it names a cause ("3) Not enough RAM.") but an account when it tells an event with a finite
// verb ("2) Sometimes it errors out because it runs out of system RAM"). Real logs from the read split blind7 beside
// synthetic variants written from the principle (each says so), in process through the CLI's own entry.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('real pastes (read split blind7)', () => {
  it('blind7/3910: "enforce fail at CPUAllocator.cpp" in the eval phase, named in words only', async () => {
    expect((await firstOfCase('blind7', '3910'))?.category).toBe('host_oom_killed');
  });
  it('blind7/3939: darknet mAP, "2) Sometimes mAP errors out because it runs out of system RAM"', async () => {
    expect((await firstOfCase('blind7', '3939'))?.category).toBe('host_oom_killed');
  });
});

describe('synthetic variants written from the principle', () => {
  it('synthetic: the allocator file named in a title, old and new file names', async () => {
    for (const t of ['Error "enforce fail at CPUAllocator.cpp" when loading the dataset', 'got [enforce fail at alloc_cpu.cpp:114] while predicting'])
      expect((await diagnosePaste(t))?.category).toBe('host_oom_killed');
  });
  it('synthetic: list items that tell the event are accounts', async () => {
    for (const t of [
      'Two problems:\n1) training is slow\n2) the evaluation crashed because it ran out of RAM',
      '- the job gets killed: it runs out of system memory at epoch 3',
    ])
      expect((await diagnosePaste(t))?.category).toBe('host_oom_killed');
  });
  it('synthetic control: a list of possible causes names no failure of this run', async () => {
    const d = await diagnosePaste('Possible reasons for slow training:\n1) Not enough RAM.\n2) Too few workers.');
    expect(d?.category).not.toBe('host_oom_killed');
  });
  it('synthetic control: another enforce failure is no memory failure', async () => {
    const d = await diagnosePaste('RuntimeError: [enforce fail at inline_container.cc:145] . PytorchStreamReader failed reading zip archive');
    expect(d?.category).not.toBe('host_oom_killed');
  });
});
