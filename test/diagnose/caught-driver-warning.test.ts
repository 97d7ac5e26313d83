// A warning a tool prints and runs past is not the failure (issue 23, routes): AUTOMATIC1111's memory monitor catches
// torch's "Found no NVIDIA driver" and goes on ("Warning: caught exception '...', memory monitor disabled",
// modules/memmon.py), so a later kill is the failure. Synthetic variants beside the real blind9 thread; torch's own
// error still reads as a driver problem.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const memmon =
  "Warning: caught exception 'Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx', memory monitor disabled";

describe("AUTOMATIC1111's caught driver warning is not the failure", () => {
  it('synthetic: the warning alone is no driver diagnosis', async () => {
    const d = await diagnosePaste(
      `Launching Web UI with arguments: --use-cpu all --no-half\n${memmon}\nLoading weights [6ce0161689] from /models/v1-5-pruned-emaonly.safetensors`,
    );
    expect(d?.category).not.toBe('driver_or_smi');
  });
  it('synthetic: the warning, then the container killed ("it\'s killed"): host RAM', async () => {
    const d = await diagnosePaste(`${memmon}\nThe RAM usage climbs while the models load and finally it's killed.`);
    expect(d?.category).toBe('host_oom_killed');
  });
  it("synthetic: torch's own error is still the driver's", async () => {
    const d = await diagnosePaste(
      '  File "x/torch/cuda/__init__.py", line 298, in _lazy_init\n    torch._C._cuda_init()\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver',
    );
    expect(d?.category).toBe('driver_or_smi');
  });
  it('real thread (blind9/5763, auto-cpu web UI in Docker on 16 GB): host RAM, not the driver', async () => {
    const d = await firstOfCase('blind9', '5763');
    expect(d?.category).toBe('host_oom_killed');
  });
});
