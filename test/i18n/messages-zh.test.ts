// Issue 24 §2: what services, parsers and sources say travels as a catalogue key and values (core/message.ts)
// to the reply, which renders it in the asker's language; nothing is made in English and matched back.
// Through the registry's dispatch (as the chat adapters call it), a zh asker gets the zh catalogue's text
// for a usage error of `fit` (a word parser's and a schema check's), a readings note, notify's refusal and
// a host's warnings from a real Prometheus source (over a fake fetch, as test/sources/prometheus-group.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/core/command.js';
import { missingKeys, resetMissingKeys, t, type Locale } from '../../src/core/i18n.js';
import type { Reply } from '../../src/core/reply.js';
import type { HostsService } from '../../src/core/services.js';
import { PrometheusGroup } from '../../src/sources/prometheus/hosts.js';
import { DEFAULT_JOIN } from '../../src/sources/prometheus/parse.js';
import { fakeHosts, testDeps } from '../adapters/helpers.js';
import { exposition, fixtureText } from '../sources/exposition.js';

/** Every string a reply shows. */
function shown(r: Reply): string {
  return [r.title, r.footer ?? '', ...r.sections.flatMap((s) => [s.heading ?? '', s.text ?? '', ...(s.table?.rows.flat() ?? [])])].join('\n');
}

/** A Prometheus group whose one host has GPU series and node memory, and whose API warns that data may be partial. */
function promHosts(): HostsService {
  const gpu = exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: '10.0.0.1:9400', job: 'dcgm' });
  const node = exposition(fixtureText('node-exporter-e2e-memory.prom'), { instance: '10.0.0.1:9100', job: 'node' });
  const fetchImpl = (async (_url: URL | RequestInfo, init?: RequestInit) => {
    const query = new URLSearchParams(init?.body as URLSearchParams).get('query') ?? '';
    const result = query.includes('node_memory_') ? node : gpu;
    return new Response(JSON.stringify({ status: 'success', data: { resultType: 'vector', result }, warnings: ['store eu-1 timed out; partial'] }), {
      status: 200,
    });
  }) as typeof fetch;
  const group = new PrometheusGroup(
    { name: 'fleet', url: 'http://prometheus.test:9090', timeoutMs: 2000, historyStepS: 60, join: DEFAULT_JOIN, hosts: [{ name: 'gpu7', match: '10.0.0.1' }] },
    fetchImpl,
  );
  return { ...fakeHosts(), status: (names) => Promise.all((names.length ? names : ['gpu7']).map((n) => group.status(n))) };
}

describe('a zh asker gets the zh catalogue for what services, parsers and sources say', () => {
  let deps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    deps = await testDeps({ watch: true });
  });
  afterAll(() => resetMissingKeys());

  const ask = async (line: string, locale: Locale, services = deps.services) => {
    const ctx: CommandContext = { platform: 'slack', userId: 'UZH', isAdmin: false, channelId: 'C1', locale, services };
    return shown((await deps.registry.dispatch(line, ctx)).reply);
  };

  it('fit: a size without its unit (the word parser) and a count out of range (the schema check)', async () => {
    resetMissingKeys();
    const hint = (loc: Locale) => t(loc, 'usage.size.didYouMean', { hint: t(loc, 'usage.size.hint'), word: '40' });
    expect(await ask('fit 40', 'zh')).toContain(hint('zh'));
    expect(await ask('fit 40', 'en')).toContain(hint('en'));
    expect(await ask('fit 40G 99', 'zh')).toContain(t('zh', 'usage.count.range', { max: 16 }));
    expect(await ask('fit 40G 99', 'en')).toContain(t('en', 'usage.count.range', { max: 16 }));
    expect(missingKeys()).toEqual([]);
  });

  it('a readings note: a pasted nvidia-smi CSV row that does not fit its header, with the OOM it came with', async () => {
    const paste = [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.50 GiB is free.',
      'index, name, memory.used [MiB], memory.total [MiB]',
      '0, NVIDIA H100, 1000 MiB, 81559 MiB',
      '1, NVIDIA H100, 2000 MiB',
      '2, NVIDIA H100, 3000 MiB, 81559 MiB',
    ].join('\n');
    const vars = { skipped: 1, what: 'GPU', columns: 4, first: 2, rows: 2 };
    expect(await ask(`diagnose ${paste}`, 'zh')).toContain(t('zh', 'note.smi.skippedOne', vars));
    expect(await ask(`diagnose ${paste}`, 'en')).toContain(t('en', 'note.smi.skippedOne', vars));
  });

  it("notify: the refusal past the per-user limit (the notify service's reason)", async () => {
    for (let i = 0; i < 3; i++) expect(await ask('notify 40G', 'zh')).not.toContain(t('zh', 'notify.notAdded.title'));
    const refused = await ask('notify 40G', 'zh');
    expect(refused).toContain(t('zh', 'notify.notAdded.title'));
    expect(refused).toContain(t('zh', 'reason.notify.tooMany', { n: 3, max: 3 }));
  });

  it("status: a host's warnings from its Prometheus source, each in zh, the exporter's own words as they came", async () => {
    const services = { ...deps.services, hosts: promHosts() };
    const partial = (loc: Locale) => t(loc, 'reason.prom.partial', { list: 'store eu-1 timed out; partial' });
    const zh = await ask('status gpu7', 'zh', services);
    expect(zh).toContain(`${t('zh', 'reason.prom.dcgmWhole')}；${partial('zh')}`);
    const en = await ask('status gpu7', 'en', services);
    expect(en).toContain(`${t('en', 'reason.prom.dcgmWhole')}; ${partial('en')}`);
  });
});
