// NCCL's result strings (ncclGetErrorString) are fixed: "invalid argument (run with NCCL_DEBUG=WARN for details)" for
// ncclInvalidArgument is read like its siblings (invalid usage, internal error, unhandled system error) as a set-up error
// whose WARN line names the cause, never as memory. Synthetic, written from the strings (torch's wrapper with and
// without a rank prefix). In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste } from './corpus-case.js';

describe("NCCL's invalid argument", () => {
  it.each([
    [
      'torch wrapper',
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.14.3',
    ],
    [
      'rank prefix',
      '[rank2]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.18.1\n[rank2]: ncclInvalidArgument: Invalid value for an argument.',
    ],
    ['result name', 'ncclInvalidArgument: Invalid value for an argument.'],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-setup-error');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(d?.fixes[0]?.summary ?? '').toMatch(/NCCL_DEBUG/);
  });
});
