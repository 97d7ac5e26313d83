// What the status command's cgroup and proc sections say about a GPU process: the container a visible
// pid runs in (from the /proc/PID/cgroup line the host printed), and whether /proc hides other users'
// processes (hidepid), which changes why a pid ps does not know is hidden.
import { describe, expect, it } from 'vitest';
import { attachPs, containerLabel, hidesPids, HIDDEN_PID_TEXT, HIDEPID_TEXT, parseCgroups, parsePs, splitSections } from '../../src/hosts/parse.js';
import { CGROUP_CONTAINER_ID, SECTION_MARK, STATUS_COMMAND } from '../../src/hosts/remote-commands.js';
import { localContainerSections } from '../../src/hosts/local.js';
import { readFileSync } from 'node:fs';

const ID = '3f2a9c1b2d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4';

describe('container of a visible GPU process', () => {
  it('reads the runtime and id from the cgroup lines real runtimes write (v1 and v2, systemd and cgroupfs drivers)', () => {
    const lines = [
      `101 12:memory:/docker/${ID}`, // cgroup v1, cgroupfs driver
      `102 0::/system.slice/docker-${ID}.scope`, // v2, systemd driver
      `103 0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_4e5f.slice/cri-containerd-${ID}.scope`,
      `104 0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/crio-${ID}.scope`,
      `105 0::/machine.slice/libpod-${ID}.scope/container`,
      `106 11:pids:/kubepods/burstable/pod0a1b2c3d-4e5f/${ID}`,
      `107 0::/user.slice/${ID}`,
      '108 0::/user.slice/user-1000.slice/session-4.scope', // no container: ignored
      `not a pid ${ID}`,
      `109 0::/x/${ID}ff`, // 66 hex: not an id
    ].join('\n');
    const c = parseCgroups(lines);
    expect([...c.keys()]).toEqual([101, 102, 103, 104, 105, 106, 107]);
    expect([...c.values()].map((x) => x.runtime)).toEqual(['docker', 'docker', 'containerd', 'cri-o', 'podman', 'kubernetes', null]);
    expect(c.get(101)!.id).toBe(ID);
    expect(containerLabel(c.get(102)!)).toBe('[docker 3f2a9c1b2d4e]');
    expect(containerLabel(c.get(107)!)).toBe('[container 3f2a9c1b2d4e]');
  });

  it('status puts the container in front of the command; a hidden pid is a container unless /proc has hidepid', () => {
    const out = [
      `${SECTION_MARK} gpu 0`,
      `${SECTION_MARK} apps 0`,
      `    4242 root  60 python train.py`,
      `${SECTION_MARK} ps 0`,
      `4242 0::/system.slice/docker-${ID}.scope`,
      `${SECTION_MARK} cgroup 0`,
      'hidepid=invisible',
      `${SECTION_MARK} proc 0`,
    ].join('\n');
    const s = splitSections(out);
    const procs = [
      { gpuIndex: 0, pid: 4242, user: null, memoryMiB: 100, command: null, processName: 'python' },
      { gpuIndex: 1, pid: 999, user: null, memoryMiB: 100, command: null, processName: '[Not Found]' },
    ];
    const withHidepid = attachPs(procs, parsePs(s.ps!.out), 0, { containers: parseCgroups(s.cgroup!.out), hidepid: hidesPids(s.proc) });
    expect(withHidepid.map((p) => [p.user, p.command])).toEqual([
      ['root', '[docker 3f2a9c1b2d4e] python train.py'],
      [null, HIDEPID_TEXT],
    ]);
    expect(hidesPids({ out: 'hidepid=0', code: 0 })).toBe(false);
    expect(hidesPids({ out: '', code: 0 })).toBe(false);
    expect(hidesPids({ out: 'hidepid=2', code: 0 })).toBe(true);
    expect(attachPs(procs, parsePs(s.ps!.out), 0)[1].command).toBe(HIDDEN_PID_TEXT);
    expect(attachPs([{ ...procs[1], processName: 'python3' }], new Map(), 0)[0].command).toBe(`${HIDDEN_PID_TEXT}: python3`);
  });

  it('the command reads only digits-only pids and a constant pattern: nothing from outside is spliced in', () => {
    expect(CGROUP_CONTAINER_ID).toBe('[0-9a-f]{64}');
    expect(STATUS_COMMAND).toContain('grep -xE "[0-9]{1,10}" | head -n 512 | while read -r p; do l=$(grep -m1 -E "[0-9a-f]{64}" /proc/$p/cgroup');
    expect(STATUS_COMMAND).toContain('grep -E "^[^ ]+ /proc proc " /proc/mounts');
    expect(STATUS_COMMAND.slice(7, -1)).not.toContain("'");
  });

  it('localhost reads the same from /proc itself, with no process started', async () => {
    const own = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => /[0-9a-f]{64}/.test(l));
    const mounts =
      readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .find((l) => /^\S+ \/proc proc /.test(l)) ?? '';
    const s = await localContainerSections([process.pid, 4_000_000_000]);
    // This test's own process: in a container where the machine is one, else nothing; a pid that does not exist: nothing.
    expect(s.cgroup!.out).toBe(own ? `${process.pid} ${own.slice(0, 300)}` : '');
    expect(s.proc!.out).toBe(/hidepid=[a-z0-9]+/.exec(mounts)?.[0] ?? '');
  });
});
