// NCCL found no network interface to bootstrap over (issue 23, nccl): its own WARNs (bootstrap.cc "Bootstrap : no socket
// interface found", transport/net_socket.cc "NET/Socket : no interface found", "No usable listening interface found",
// net_ib "NET/IB : No IP interface found") name the interface filter, not a rank that fell behind. Synthetic variants
// written from NCCL's source (a WARN line, the "Last error:" block torch prints, a [rankN]: prefix, the socket and IB
// transports), beside the real blind9 thread.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe("NCCL's no-interface WARNs are the interface filter: NCCL_SOCKET_IFNAME first", () => {
  it.each([
    [
      'a WARN line before a DDP frame',
      'host:101:101 [0] bootstrap.cc:40 NCCL WARN Bootstrap : no socket interface found\nhost:101:101 [0] NCCL INFO init.cc:87 -> 3\n  File "x/torch/nn/parallel/distributed.py", line 674, in __init__',
    ],
    [
      'torch\'s "Last error:" block with a rank prefix',
      '[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:2588, internal error, NCCL version 2.21.5\n[rank1]: ncclInternalError: Internal check failed.\n[rank1]: Last error:\n[rank1]: Bootstrap : no socket interface found',
    ],
    [
      'the socket transport',
      'node3:77:90 [2] transport/net_socket.cc:61 NCCL WARN NET/Socket : no interface found\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, internal error, NCCL version 2.10.3',
    ],
    ['the bootstrap listener', 'gpu1:12:12 [0] NCCL WARN NET/Socket : No usable listening interface found\nncclInternalError: Internal check failed.'],
    [
      'the out-of-band interface variable',
      'n1:5:5 [0] NCCL WARN no device found matching eth9, verify NCCL_OOB_NET_IFNAME\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('nccl-setup-error');
    expect(first(d)).toMatch(/NCCL_SOCKET_IFNAME/);
  });
  it('real thread (blind9/5738, RT-DETR DDP): the bootstrap WARN, not a collective timeout', async () => {
    const d = await firstOfCase('blind9', '5738');
    expect(d?.rule).toBe('nccl-setup-error');
    expect(first(d)).toMatch(/NCCL_SOCKET_IFNAME/);
  });
});
