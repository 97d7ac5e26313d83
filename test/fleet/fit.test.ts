// The fit ranking on real readings: the 8x H200 host of fixtures 13 + 37 (every GPU held by a vLLM
// rank, the last one in a container) as captured and after some of its processes ended
// (test/hosts/replay-readings.ts), read through the same parsers as the hosts service.
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { formatMiB, parseHours, parseNotifyWords, parseSize } from '../../src/fleet/args.js';
import { english, type Message } from '../../src/core/message.js';
import { marginFor, rankFits, sshHint, type FitRequest } from '../../src/fleet/fit.js';
import { fitReply } from '../../src/fleet/render.js';
import { h200After, statusOf } from '../hosts/replay-readings.js';

const G = 1024;
const settings = { marginMiB: 1024, marginPct: 5 };
const req = (o: Partial<FitRequest>): FitRequest => ({ sizeMiB: 40 * G, count: 1, hours: 1, shared: false, ...o });
const ssh = (h: string) => (h === 'gpu-a' ? 'ssh -p 2222 10.0.0.5' : null);

// As captured: 143771 MiB per GPU, 84282-84522 used, each GPU one process (alice/bob alternate; GPU 7's
// pid is in a container, so ps does not name it).
const captured = statusOf('gpu-a', h200After());

describe('fit ranking', () => {
  it('counts free memory minus max(margin, % of the card): a job of exactly the usable memory fits, 1 MiB more does not', () => {
    const freed = statusOf('gpu-a', h200After([3]));
    const g3 = freed.ok ? freed.gpus.find((g) => g.index === 3)! : null;
    expect(g3).toMatchObject({ memoryUsedMiB: 10, memoryTotalMiB: 143771 });
    const margin = marginFor(143771, settings);
    expect(margin).toBe(7189); // 5% of the card is more than 1 GiB
    const usable = 143771 - 10 - margin;
    const exact = rankFits([freed], req({ sizeMiB: usable }), settings);
    expect(exact.fits.map((c) => [c.host, c.env])).toEqual([['gpu-a', 'CUDA_VISIBLE_DEVICES=3']]);
    expect(exact.fits[0].minUsableMiB).toBe(usable);
    const over = rankFits([freed], req({ sizeMiB: usable + 1 }), settings);
    expect(over.fits).toEqual([]);
    expect(over.closest?.gpus.map((g) => g.index)).toEqual([3]);
    // A fixed margin alone, when the percentage is off: 1 GiB.
    expect(rankFits([freed], req({ sizeMiB: 143771 - 10 - 1024 }), { marginMiB: 1024, marginPct: 0 }).fits).toHaveLength(1);
    expect(rankFits([freed], req({ sizeMiB: 143771 - 10 - 1023 }), { marginMiB: 1024, marginPct: 0 }).fits).toHaveLength(0);
  });

  it("leaves out GPUs where someone else's process runs unless shared, and says how many that hides", () => {
    const alone = rankFits([captured], req({}), settings);
    expect(alone.fits).toEqual([]);
    expect(alone.sharedFits).toBe(8);
    const shared = rankFits([captured], req({ shared: true }), settings);
    expect(shared.fits).toHaveLength(8);
    // Best first: GPU 7 holds the least (84282 MiB used), then the rest by index at equal memory.
    expect(shared.fits.map((c) => c.gpus[0].index)).toEqual([7, 0, 1, 2, 3, 4, 5, 6]);
    expect(shared.fits[0].minUsableMiB).toBe(143771 - 84282 - 7189);
    // The asker's own processes do not count as someone else's (the console user is the unix user).
    const mine = rankFits([captured], req({ ownUsers: ['alice'] }), settings);
    expect(mine.fits.map((c) => c.gpus[0].index).sort()).toEqual([0, 2, 4, 6]);
    // Freed GPUs come before shared ones even when the shared one has as much room.
    const mixed = rankFits([statusOf('gpu-a', h200After([5]))], req({ shared: true }), settings);
    expect(mixed.fits[0]).toMatchObject({ othersHere: false, env: 'CUDA_VISIBLE_DEVICES=5' });
  });

  it('count N: N GPUs on one host, never spread over hosts', () => {
    const two = statusOf('gpu-a', h200After([3, 5]));
    const other = statusOf('gpu-b', h200After([1]));
    const r = rankFits([two, other], req({ count: 2 }), settings, [], ssh);
    expect(r.fits.map((c) => [c.host, c.env, c.ssh])).toEqual([['gpu-a', 'CUDA_VISIBLE_DEVICES=3,5', 'ssh -p 2222 10.0.0.5']]);
    // gpu-b has one free GPU and gpu-a two: three GPUs fit nowhere, although three are free in all.
    const three = rankFits([two, other], req({ count: 3 }), settings);
    expect(three.fits).toEqual([]);
    expect(three.closest?.host).toBe('gpu-a');
    expect(three.closest?.gpus.map((g) => g.index)).toEqual([3, 5, 7]);
    // Its GPU 7 has the room; what keeps it out is someone else's process, and the reply says so.
    expect(renderText(fitReply(three, '40G'))).toContain("Closest: gpu-a GPU 3,5,7, 51.1 GiB usable, enough memory, but someone else's process runs there.");
    // With sharing, gpu-a's third GPU is the one with the most room (7), gpu-b's set ranks after.
    const threeShared = rankFits([two, other], req({ count: 3, shared: true }), settings);
    expect(threeShared.fits.map((c) => [c.host, c.env])).toEqual([
      ['gpu-a', 'CUDA_VISIBLE_DEVICES=3,5,7'],
      ['gpu-b', 'CUDA_VISIBLE_DEVICES=0,1,7'],
    ]);
  });

  it('a GPU whose process grows X MiB/h is not free for N hours: free - margin - X*N must still fit', () => {
    const growth = [{ host: 'gpu-a', gpu: 7, mibPerHour: 2000, pid: 1758887 }];
    const usable7 = 143771 - 84282 - 7189; // 52300 MiB
    const oneHour = rankFits([captured], req({ shared: true }), settings, growth);
    expect(oneHour.fits.find((c) => c.gpus[0].index === 7)?.minUsableMiB).toBe(usable7 - 2000);
    const eightHours = rankFits([captured], req({ shared: true, hours: 8 }), settings, growth);
    expect(eightHours.fits.map((c) => c.gpus[0].index)).not.toContain(7);
    expect(eightHours.fits).toHaveLength(7);
    expect(eightHours.growthApplied).toBe(1);
    // Without the growth it would have been first: the trend is what moved it out.
    expect(rankFits([captured], req({ shared: true, hours: 8 }), settings, []).fits[0].gpus[0].index).toBe(7);
    // Growth of a process that is no longer on the GPU says nothing about now.
    const ended = rankFits([captured], req({ shared: true, hours: 8 }), settings, [{ host: 'gpu-a', gpu: 7, mibPerHour: 2000, pid: 4242 }]);
    expect(ended.fits[0].gpus[0].index).toBe(7);
  });

  it('nothing fits: the closest GPU, how far short, and who holds it', () => {
    const r = rankFits([captured, { name: 'gpu-down', ok: false, error: 'connection refused' }], req({ sizeMiB: 100 * G }), settings, [], ssh);
    expect(r.fits).toEqual([]);
    expect(r.closest).toMatchObject({ host: 'gpu-a', env: 'CUDA_VISIBLE_DEVICES=7' });
    expect(r.closest!.gpus[0].holders).toEqual([{ pid: 1758887, user: null, memoryMiB: 58060 }]);
    expect(r.skipped).toEqual(['gpu-down: connection refused']);
    const text = renderText(fitReply(r, '100G'));
    expect(text).toContain('100G fits nowhere now');
    expect(text).toContain(`Closest: gpu-a GPU 7, ${formatMiB(143771 - 84282 - 7189)} usable, ${formatMiB(100 * G - (143771 - 84282 - 7189))} short`);
    expect(text).toContain('held by a container (pid 1758887, 56.7 GiB)');
    expect(text).toContain('/gpu notify 100G');
    expect(text).toContain('gpu-down: connection refused');
    // Two GPUs: the free one and the next closest, with its owner named by the host's ps.
    const pair = rankFits([statusOf('gpu-a', h200After([7]))], req({ sizeMiB: 100 * G, count: 2 }), settings);
    expect(pair.closest?.gpus.map((g) => g.index)).toEqual([7, 0]);
    const pairText = renderText(fitReply(pair, '100G'));
    expect(pairText).toContain('GPU 7: 140.4 GiB free of 140.4 GiB, 133.4 GiB usable after a 7.0 GiB margin; held by nobody');
    expect(pairText).toContain('; held by alice (pid 1328667, 127.0 GiB)');
  });

  it('a fit reply gives the line to start it: ssh hint and CUDA_VISIBLE_DEVICES', () => {
    const r = rankFits([statusOf('gpu-a', h200After([2, 6]))], req({ count: 2 }), settings, [], ssh);
    expect(fitReply(r, '40G').sections[0]).toEqual({ heading: 'Best: gpu-a GPU 2,6', code: 'ssh -p 2222 10.0.0.5\nCUDA_VISIBLE_DEVICES=2,6 <your command>' });
    expect(fitReply(r, '40G').title).toBe('40G on each of 2 GPUs of one host fits on 1 host');
  });

  it('reads the ssh hint from the registry target without the bot login', () => {
    expect(sshHint('ml@10.1.2.3:22')).toBe('ssh 10.1.2.3');
    expect(sshHint('ml@127.0.0.1:40123')).toBe('ssh -p 40123 127.0.0.1');
    expect(sshHint('local')).toBeNull();
  });
});

describe('fit and notify words', () => {
  it('reads SIZE strictly and bounded', () => {
    expect(parseSize('40G')).toEqual({ mib: 40 * G });
    expect(parseSize('7.5GiB')).toEqual({ mib: 7680 });
    expect(parseSize('24000M')).toEqual({ mib: 24000 });
    expect(parseSize('24000mib')).toEqual({ mib: 24000 });
    for (const bad of ['999999999T', 'abc', '40', '-4G', '40  G', '1e3G', '0M', '2048G', '40GBB', '40iB', '40Gi'])
      expect(parseSize(bad), bad).toHaveProperty('error');
    expect(english((parseSize('40') as { error: Message }).error)).toContain('did you mean 40G?');
    expect(english((parseSize('2048G') as { error: Message }).error)).toContain('at most 1024 GiB');
    expect(parseHours('12h')).toEqual({ hours: 12 });
    expect(parseHours('2d')).toEqual({ hours: 48 });
    expect(parseHours('8d')).toHaveProperty('error');
    expect(parseHours('0')).toHaveProperty('error');
  });

  it('notify: SIZE [count] [for 12h], add, list, cancel', () => {
    expect(parseNotifyWords(['40G'])).toEqual({ action: 'add', sizeMiB: 40 * G, size: '40G', count: 1, hours: 12 });
    expect(parseNotifyWords(['40G', '2', 'for', '6h'])).toMatchObject({ count: 2, hours: 6 });
    expect(parseNotifyWords(['40G', 'for', '2d'])).toMatchObject({ count: 1, hours: 48 });
    expect(parseNotifyWords(['add', '40G', '1', '6'])).toMatchObject({ count: 1, hours: 6 });
    expect(parseNotifyWords(['list'])).toEqual({ action: 'list' });
    expect(parseNotifyWords(['cancel', '#3'])).toEqual({ action: 'cancel', id: 3 });
    for (const bad of [
      ['cancel'],
      ['cancel', 'x'],
      ['40G', '0'],
      ['40G', '17'],
      ['40G', 'for'],
      ['40G', 'for', '9d'],
      ['abc'],
      ['40G', '2', '3', '4'],
      ['list', 'all'],
    ])
      expect(parseNotifyWords(bad), bad.join(' ')).toHaveProperty('error');
  });
});
