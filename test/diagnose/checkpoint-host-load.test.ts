// A host kill while a checkpoint deserialises into host RAM (issue 23, host phase): torch.load(map_location='cpu'),
// Accelerate's load_state (it maps every file to the CPU) or torch.load's own frames, before any step, put the whole
// state in every process's RAM; the load lever (map it to each process's device, mmap, --mem) comes first, not workers.
// Synthetic variants beside the real blind9 thread; a kill after training steps is not read as a load.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const slurmKill =
  'slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.';

describe('killed while a checkpoint loads into host RAM: map it to the device', () => {
  it.each([
    ['torch.load to the CPU in the code', `state = torch.load("ckpt/optimizer.pt", map_location="cpu")\noptimizer.load_state_dict(state)\n${slurmKill}`],
    ["torch.device('cpu') as the map", `ckpt = torch.load(path, map_location=torch.device('cpu'))\nKilled`],
    ["Accelerate's load_state", `accelerator.load_state("runs/step_2000")\n${slurmKill}`],
    [
      "torch.load's own frame under a host allocation failure",
      '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1025, in load\n    return _load(opened_zipfile,\nRuntimeError: [enforce fail at alloc_cpu.cpp:83] : DefaultCPUAllocator: can\'t allocate memory: you tried to allocate 3221225472 bytes.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/map_location/);
  });
  it('synthetic: the same load after training steps logged a loss is not read as the load', async () => {
    const d = await diagnosePaste(`ckpt = torch.load(path, map_location="cpu")\nepoch 3 step 1200 loss 0.412\nepoch 3 step 1300 loss 0.405\nKilled`);
    expect(first(d)).not.toMatch(/map_location/);
  });
  it('real thread (blind9/5743, Accelerate resume under Slurm): the load to the device', async () => {
    const d = await firstOfCase('blind9', '5743');
    expect(first(d)).toMatch(/map_location.*accelerator\.device|per process/);
  });
});
