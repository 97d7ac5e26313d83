// The Kubernetes pod a GPU process runs in (issue 25 §2): where its /proc/PID/cgroup path is a kubelet's, the
// pod's UID is read from it and shown beside the container in `/gpu status` (the host knows UIDs, not names:
// `kubectl get pods -A -o custom-columns=NAME:.metadata.name,UID:.metadata.uid` maps them).
// Real paths: the cgroup v1 line `cat /proc/21689/cgroup` printed in opencontainers/runc#4620 (CRI-O, systemd
// driver); and a static pod's path assembled from the real `systemd-cgls` tree in netdata/netdata#4868
// (kubepods.slice > kubepods-burstable.slice > kubepods-burstable-pod187bff14...slice > cri-containerd-....scope).
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { attachPs, parseCgroups, parsePs, splitSections } from '../../src/hosts/parse.js';
import { statusReply } from '../../src/hosts/render.js';
import { SECTION_MARK } from '../../src/hosts/remote-commands.js';

const RUNC_4620 =
  '13:freezer:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda5c1f8d5_1919_434d_add7_4afaafdaef89.slice/crio-5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c.scope';
const NETDATA_4868 =
  '0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod187bff14cccb94f179e943eacce55bb3.slice/cri-containerd-c203a2647ef1ad78e990157c50331f3b6ef0b03336cf08535d6bf7faa5421415.scope';

describe('the pod of a GPU process', () => {
  it('reads the pod UID (dashes restored) and the container from a kubelet cgroup path', () => {
    const c = parseCgroups(`21689 ${RUNC_4620}\n4242 ${NETDATA_4868}\n7 0::/system.slice/docker-${'a'.repeat(64)}.scope`);
    expect(c.get(21689)).toEqual({
      runtime: 'cri-o',
      id: '5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c',
      podUid: 'a5c1f8d5-1919-434d-add7-4afaafdaef89',
    });
    expect(c.get(4242)).toMatchObject({ runtime: 'containerd', podUid: '187bff14cccb94f179e943eacce55bb3' });
    expect(c.get(7)!.podUid).toBeUndefined();
  });

  it('status shows the pod beside the container in front of the command', () => {
    const s = splitSections(
      [`   21689 carol       3600  88.0   4194304 python serve.py`, `${SECTION_MARK} ps 0`, `21689 ${RUNC_4620}`, `${SECTION_MARK} cgroup 0`].join('\n'),
    );
    const processes = attachPs([{ gpuIndex: 0, pid: 21689, user: null, memoryMiB: 30_000, command: null, processName: 'python' }], parsePs(s.ps!.out), 0, {
      containers: parseCgroups(s.cgroup!.out),
    });
    expect(processes[0].command).toBe('[cri-o 5eed91756358 · pod a5c1f8d5] python serve.py');
    const text = renderText(
      statusReply([
        {
          name: 'k8s-node',
          ok: true,
          elapsedMs: 1,
          gpus: [{ index: 0, uuid: null, name: 'NVIDIA H100', memoryUsedMiB: 30_000, memoryTotalMiB: 81_559, utilizationPct: 50, temperatureC: 40 }],
          processes,
        },
      ]),
    );
    expect(text).toContain('[cri-o 5eed91756358 · pod a5c1f8d5] python serve.py');
  });
});
