// Issue 23: an NCCL failure is named by NCCL's own result strings (ncclGetErrorString: "unhandled system error",
// "internal error"), whatever wrapper prints them: PyTorch's "NCCL error in: ...", an NCCL call's name with its code
// ("ncclGroupEnd() : 0002 unhandled system error"), nccl-tests' "NCCL failure common.cu:NNN", Paddle's "Nccl error, ...".
// And Paddle's wrapper adds its /dev/shm remedies only when errno is ENOSPC or EAGAIN (build_nvidia_error_msg): NCCL's
// shared-memory transport on this machine failed, whatever NCCL string precedes it. Real logs from blind6/blind7 (read
// splits; URLs in their cases.json) and synthetic variants written from the principle (marked "synthetic"). In process.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe("NCCL's result string beside the call that returned it is an NCCL failure, not 'no diagnosis'", () => {
  it('real blind7/3976: "ncclGroupEnd() : 0002 unhandled system error" across four IB nodes: the setup rule', async () => {
    const d = await firstOfCase('blind7', '3976');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(d?.rule).toBe('nccl-setup-error');
    expect(first(d)).toMatch(/NCCL_DEBUG=INFO/);
  });

  // synthetic: the caller's wrappers around NCCL's own strings, on more than one node (no one-machine evidence)
  it.each([
    ['call with code', 'node07:2211:2211 [0] NCCL INFO Using network IB\nncclCommInitRank() : 0002 unhandled system error'],
    ['call, internal', 'Failed, NCCL error: ncclAllReduce returned internal error (node 3 of 8)'],
    ['nccl-tests', "gpu-node-2: Test NCCL failure common.cu:1005 'unhandled system error'\n .. gpu-node-2 pid 9901: Test failure common.cu:891"],
    ['lower-case wrapper', 'RuntimeError: nccl error: internal error - please report this issue to the NCCL developers'],
    [
      'XLA wrapper',
      'jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });

  // synthetic near misses: the strings without NCCL, or NCCL without a failure
  it.each([
    ['no NCCL', 'Error: unhandled system error while reading the config'],
    ['NCCL info only', 'node1:77:77 [0] NCCL INFO ncclCommInitRank comm 0x55d0 rank 0 nranks 2 - Init COMPLETE'],
  ])('synthetic near miss: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).not.toBe('nccl_or_distributed');
  });
});

describe("Paddle's NCCL error with its ENOSPC/EAGAIN remedy list is NCCL's shared-memory transport on one machine", () => {
  it('real blind6/3892: "Nccl error, invalid data type, detail: Resource temporarily unavailable" in docker', async () => {
    const d = await firstOfCase('blind6', '3892');
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/\/dev\/shm/);
    expect(first(d)).toMatch(/NCCL_SHM_DISABLE|--ipc=host/);
  });

  // synthetic: both of Paddle's formats (fluid: "Nccl error, X, detail: ..."; phi: "NCCL error(N), X.  Detail: ..."),
  // no container named and no node count: the errno hint itself says the local transport failed
  it.each([
    [
      'fluid, ENOSPC',
      'OSError: (External) Nccl error, unhandled system error, detail: No space left on device\nPlease try one of the following solutions:\n1. export NCCL_SHM_DISABLE=1;\n2. export NCCL_P2P_LEVEL=SYS;\n3. Increase shared memory by setting the -shm-size option when starting docker container, e.g., setting  -shm-size=2g.\n  (at /paddle/paddle/fluid/platform/collective_helper.cc:72)',
    ],
    [
      'phi, EAGAIN',
      'ExternalError: NCCL error(2), unhandled system error.  Detail: Resource temporarily unavailable\nPlease try one of the following solutions:\n1. export NCCL_SHM_DISABLE=1;\n2. export NCCL_P2P_LEVEL=SYS;\n3. Increase shared memory by setting the -shm-size option when starting docker container, e.g., setting  -shm-size=2g.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('nccl_or_distributed');
    expect(first(d)).toMatch(/\/dev\/shm/);
  });
});

describe("NCCL's other result strings name their own cause under any wrapper", () => {
  // synthetic: "unhandled cuda error" (a CUDA call NCCL made failed) and ncclRemoteError's string (a peer went away)
  it.each([
    ['horovod, cuda', 'horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled cuda error', 'nccl-unhandled-cuda-error'],
    [
      'nccl-tests, cuda',
      "gpu-a: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '",
      'nccl-unhandled-cuda-error',
    ],
    [
      'remote error',
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, remote process exited or there was a network error, NCCL version 2.19.3',
      'nccl-lost-rank',
    ],
  ])('synthetic: %s', async (_name, text, rule) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe(rule);
    expect(first(d)).not.toMatch(/\bbatch\b/i);
  });
});

describe("NCCL's transport naming the failed completion with its peer is the fabric or that node, not a rank behind", () => {
  it('real confuse10/5511: ncclRemoteError with "NET/IB : Got completion from peer ... with error 12"', async () => {
    const d = await firstOfCase('confuse10', '5511');
    expect(d?.rule).toBe('nccl-transport-completion-error');
    expect(first(d)).toMatch(/ibstat|NCCL_IB_TIMEOUT/);
  });

  // synthetic: the IBext plugin's spelling and the OFI plugin's line, beside PyTorch's generic async-error message
  it.each([
    ['IBext', 'node3:812:901 [2] NCCL WARN NET/IBext : Got completion from peer 10.1.4.7<41230> with error 12, opcode 0, len 0, vendor err 129 (Recv)'],
    ['IBP', 'NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)'],
    [
      'OFI with the generic message',
      '[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out.\nNET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-transport-completion-error');
  });

  it('synthetic near miss: a watchdog timeout without a transport error stays the collective timeout', async () => {
    const d = await diagnosePaste(
      '[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.',
    );
    expect(d?.rule).toBe('nccl-collective-timeout');
  });
});
