// The users' language (issue 14 §6): both catalogues hold the same keys with the same placeholders,
// every key the code asks for is in them (and every key in them is asked for), and every command asked
// in en and zh answers from the catalogue: no key missing, no converted English sentence leaking into zh.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { displayWidth } from '../../src/core/text-width.js';
import type { CommandContext } from '../../src/core/command.js';
import { catalogue, LOCALES, missingKeys, pluralParts, pluralRulesOf, resetMissingKeys, t, type Locale, type MessageKey } from '../../src/core/i18n.js';
import { message, render } from '../../src/core/message.js';
import { PROJECT_ROOT } from '../../src/core/paths.js';
import { hostFailure, hostWarnings } from '../../src/hosts/source.js';
import type { Reply } from '../../src/core/reply.js';
import type { HostStatusResult, Services } from '../../src/core/services.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { ownersFromConfig } from '../../src/owners/wire.js';
import { ClaimStore } from '../../src/storage/sqlite/claims.js';
import { testDeps } from '../adapters/helpers.js';
import { TRACES_PATH } from '../watch/generate-traces.js';
import { decodeTrace } from '../watch/generator.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import type { Sample } from '../../src/watch/types.js';
import { englishRuns } from './english-runs.js';
import { buildDiscordCommands } from '../../src/adapters/discord/commands.js';
import { feedbackComponents } from '../../src/adapters/discord/feedback.js';
import { feedbackBlock } from '../../src/adapters/slack/feedback.js';
import { renderSlack } from '../../src/adapters/slack/render.js';
import { renderDiscord } from '../../src/adapters/discord/render.js';
import { statusReply } from '../../src/hosts/render.js';
import { SilenceStore } from '../../src/storage/sqlite/silences.js';

interface DescribedOption {
  name: string;
  description_localizations?: Record<string, string>;
  options?: DescribedOption[];
}

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const en = catalogue('en');
const zh = catalogue('zh');
/** A catalogue's keys with plural forms by their base (`status.title_one`, `status.title_other` -> status.title). */
const baseKeys = (c: Record<string, string>) => [...new Set(Object.keys(c).map((k) => pluralParts(k)?.base ?? k))].sort();
/** The zh text standing for an en key: the same key, or its plural's `other` form (zh has no `one`). */
const zhOf = (key: string): string | undefined => zh[key] ?? (pluralParts(key) ? zh[`${pluralParts(key)!.base}_other`] : undefined);

/** Every .ts file under a folder of the project. */
function sources(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    return statSync(join(PROJECT_ROOT, rel)).isDirectory() ? sources(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

describe('message catalogues', () => {
  it('en and zh have the same keys, the same placeholders, and no empty message', () => {
    expect(baseKeys(zh)).toEqual(baseKeys(en));
    for (const [key, text] of Object.entries(en)) {
      expect(text.trim(), key).not.toBe('');
      expect(zhOf(key)?.trim(), key).not.toBe('');
      expect(placeholders(zhOf(key) ?? ''), key).toEqual(placeholders(text));
    }
    for (const [key, text] of Object.entries(zh)) expect(placeholders(text), key).toEqual(placeholders(en[key] ?? en[`${pluralParts(key)?.base}_other`] ?? ''));
  });

  it("a plural message has exactly its language's CLDR categories (Intl.PluralRules: en one/other, zh other), no '(s)' left", () => {
    for (const locale of LOCALES) {
      const c = catalogue(locale);
      const categories = [...pluralRulesOf(locale).resolvedOptions().pluralCategories].sort();
      const plurals = new Map<string, string[]>();
      for (const key of Object.keys(c)) {
        const p = pluralParts(key);
        if (p) plurals.set(p.base, [...(plurals.get(p.base) ?? []), p.category].sort());
      }
      expect(plurals.size, locale).toBeGreaterThan(0);
      for (const [base, have] of plurals) expect(have, `${locale}:${base}`).toEqual(categories);
      // A plural base is never a plain key too (t() would never reach its forms).
      expect(
        [...plurals.keys()].filter((b) => b in c),
        locale,
      ).toEqual([]);
    }
    expect(Object.entries(en).filter(([, text]) => /\w\((?:s|es)\)/.test(text))).toEqual([]);
  });

  it('t() picks the plural form by count (or n) through Intl.PluralRules, in each language', () => {
    resetMissingKeys();
    expect(t('en', 'hostsRender.list.title', { n: 1 })).toBe('1 host');
    expect(t('en', 'hostsRender.list.title', { n: 0 })).toBe('0 hosts');
    expect(t('en', 'hostsRender.list.title', { n: 3 })).toBe('3 hosts');
    expect(t('en', 'status.title', { ok: 1, n: 1 })).toBe('GPU status: 1/1 host answered');
    expect(t('en', 'fit.growthApplied', { n: 1 })).toBe('1 GPU has a growing process; its growth is counted.');
    expect(t('en', 'fit.growthApplied', { n: 2 })).toBe('2 GPUs have a growing process; their growth is counted.');
    expect(t('zh', 'hostsRender.list.title', { n: 1 })).toBe('1 台主机');
    expect(t('zh', 'hostsRender.list.title', { n: 5 })).toBe('5 台主机');
    expect(missingKeys()).toEqual([]);
  });

  it('zh is translated: no zh message equals its English one (bar a few that are the same in both)', () => {
    const same = Object.keys(en).filter((k) => zh[k] === en[k]);
    expect(same).toEqual(['notify.col.id', 'whoami.col.id']);
  });

  it('every key the code asks for is in both catalogues, and every catalogue key is asked for', () => {
    // A quoted dotted name in a namespace of the catalogue ('whoami.col.id') in a file that imports t().
    const namespaces = new Set(Object.keys(en).map((k) => k.split('.')[0]));
    const used = new Set<string>();
    for (const file of [...sources('src'), ...sources('commands')]) {
      const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
      // Keys are asked for through t() or as a Message (message(), schemaMessage(): core/message.ts); the readings
      // parsers name their notes' keys without importing either (they stay pure).
      const asks = /import \{[^}]*\bt\b[^}]*\} from '[^']*\/i18n\.js'/.test(text) || /from '[^']*\/message\.js'/.test(text);
      if (!asks && !file.startsWith(join('src', 'readings'))) continue;
      for (const m of text.matchAll(/'([a-z][a-zA-Z0-9]*)((?:\.[a-zA-Z0-9_]+)+)'/g)) if (namespaces.has(m[1])) used.add(m[1] + m[2]);
    }
    // `/gpu help` asks for each command's summary by its name.
    for (const c of allCommands()) used.add(`cmd.${c.name}.summary`);
    for (const locale of LOCALES)
      expect(
        [...used].filter((k) => !(k in catalogue(locale)) && !(`${k}_other` in catalogue(locale))),
        locale,
      ).toEqual([]);
    expect(baseKeys(en).filter((k) => !used.has(k))).toEqual([]);
  });

  it('a Message renders in each language, nested messages too; foreign text as it is', () => {
    const usage = message('usage.notify.for', { error: message('usage.duration.range', { max: 168 }) });
    expect(render('en', usage)).toBe('for: a duration of 1-168 hours (a week)');
    expect(render('zh', usage)).toBe('for：时长 1-168 小时（一周）');
    expect(render('zh', message('usage.size.didYouMean', { hint: message('usage.size.hint'), word: '40' }))).toContain('你是想写 40G 吗');
    expect(render('zh', 'Something else entirely: 42')).toBe('Something else entirely: 42');
  });

  it('every service refusal (reason.*) and input note (note.*) renders in zh with all its values', () => {
    // A message with another nested in it, as the hosts service makes them.
    const note = { listed: 'SHA256:a', where: 'h:22', name: 'gpu2' };
    expect(
      render('zh', message('reason.hosts.trustedNote', { name: 'gpu2', fingerprint: 'SHA256:b', note: message('reason.hosts.noteDisagrees', note) })),
    ).toBe(t('zh', 'reason.hosts.trustedNote', { name: 'gpu2', fingerprint: 'SHA256:b', note: t('zh', 'reason.hosts.noteDisagrees', note) }));
    resetMissingKeys();
    for (const key of Object.keys(en).filter((k) => k.startsWith('reason.') || k.startsWith('note.')) as MessageKey[]) {
      const vars = Object.fromEntries(placeholders(en[key]).map((name, i) => [name, `v${i}x`]));
      expect(render('zh', message(key, vars)), key).toBe(zh[key].replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name])));
    }
    expect(missingKeys()).toEqual([]);
  });

  it("the platforms' own labels: Discord's /gpu descriptions have a zh-CN localization in Chinese, the 👍 / 👎 buttons and console hints are in zh", () => {
    const json = buildDiscordCommands(allCommands()).json as unknown as DescribedOption;
    const names = allCommands().map((c) => c.name);
    // A subcommand described by its own syntax (/gpu hosts list) reads the same in every language.
    const zhOk = (zh: string | undefined) => !!zh && (/^\/gpu [^\u4e00-\u9fff]*$/.test(zh) || (/[\u4e00-\u9fff]/.test(zh) && !englishRuns(zh, names).length));
    const walk = (o: DescribedOption, path: string): string[] => [
      ...(zhOk(o.description_localizations?.['zh-CN']) ? [] : [`${path}: ${o.description_localizations?.['zh-CN'] ?? '(none)'}`]),
      ...(o.options ?? []).flatMap((c) => walk(c, `${path} ${c.name}`)),
    ];
    expect(walk(json, '/gpu')).toEqual([]);
    const labels = [feedbackBlock('abc', 'zh'), ...feedbackComponents('abc', 'zh')].map((b) => JSON.stringify(b)).join('\n');
    expect(labels).toContain(t('zh', 'feedback.button.up'));
    expect(labels).toContain(t('zh', 'feedback.button.down'));
    expect(JSON.stringify(feedbackBlock('abc'))).toContain('Helpful');
    // A renderer's own notes (a table cut to fit one message) follow the reply's language.
    const big: Reply = {
      title: 't',
      severity: 'info',
      locale: 'zh',
      sections: [{ table: { columns: ['a'], rows: Array.from({ length: 500 }, (_, i) => [String(i)]) } }],
    };
    expect(JSON.stringify(renderSlack(big).blocks)).toContain('完整表格在附件 table-1.txt 中');
    expect(JSON.stringify(renderDiscord(big))).toContain('完整表格在 table-1.txt 中');
  });

  it("a host's error and its several warnings, as a source said them, are shown each in zh (a message holding '; ' too)", () => {
    const unknown = { name: 'gpu1', addr: '10.0.0.5:22', fingerprint: 'SHA256:abc' };
    const warnings = [message('reason.prom.noGpu', { match: 'gpu2' }), message('reason.prom.partial', { list: 'query timed out; retry' })];
    const results: HostStatusResult[] = [
      hostFailure('gpu1', message('reason.ssh.unknown', unknown)),
      { name: 'gpu2', ok: true, elapsedMs: 5, gpus: [], processes: [], ...hostWarnings(warnings) },
    ];
    const text = shown(statusReply(results, undefined, 'zh'));
    expect(text).toContain(t('zh', 'reason.ssh.unknown', unknown));
    expect(text).toContain(`${t('zh', 'reason.prom.noGpu', { match: 'gpu2' })}；${t('zh', 'reason.prom.partial', { list: 'query timed out; retry' })}`);
    expect(shown(statusReply(results, undefined, 'en'))).toContain(warnings.map((w) => t('en', w.key, w.params as Record<string, string>)).join('; '));
  });

  it('t() fills placeholders, falls back to English and records a missing key or value', () => {
    resetMissingKeys();
    expect(t('zh', 'registry.failed.title', { name: 'status' })).toBe('status 运行失败');
    expect(t(undefined, 'registry.failed.title', { name: 'status' })).toBe('status failed');
    expect(missingKeys()).toEqual([]);
    expect(t('en', 'registry.failed.title')).toBe('{name} failed');
    expect(missingKeys()).toEqual(['en:registry.failed.title:{name}']);
    resetMissingKeys();
  });
});

/** A labelled trace's samples shifted so its last one was taken at `endMs` (as test/watch/chart-command.test.ts). */
function endingAt(id: string, endMs: number): Sample[] {
  const trace = readFileSync(TRACES_PATH, 'utf8')
    .trim()
    .split('\n')
    .map(decodeTrace)
    .find((tr) => tr.id === id)!;
  const ms = (ts: string | number) => (typeof ts === 'number' ? ts : Date.parse(ts));
  const shift = endMs - Math.max(...trace.samples.map((x) => ms(x.ts)));
  return trace.samples.map((x) => ({
    ...x,
    ts: ms(x.ts) + shift,
    ...('processStart' in x && x.processStart !== undefined ? { processStart: ms(x.processStart) + shift } : {}),
  }));
}

/** Every string a reply shows; without `code` blocks (the log's own lines quoted as evidence, commands) when `prose`. */
function shown(r: Reply, prose = false): string {
  const parts = [r.title, r.footer ?? ''];
  for (const s of r.sections) {
    parts.push(s.heading ?? '', s.text ?? '', prose ? '' : (s.code ?? ''));
    for (const f of s.fields ?? []) parts.push(f.label, f.value);
    if (s.table) parts.push(...s.table.columns, ...s.table.rows.flat());
  }
  return parts.join('\n');
}

/** English sentences of the catalogue (the text between placeholders) that zh must not show. */
const englishFragments = Object.entries(en).flatMap(([key, text]) =>
  text
    .split(/\{\w+\}/)
    .map((f) => f.trim())
    .filter((f) => f.length >= 10 && /[a-z]{3} [a-z]/i.test(f) && !zhOf(key)!.includes(f))
    .map((f) => ({ key, f })),
);

const oom = readFileSync(join(PROJECT_ROOT, 'knowledge/cuda-oom/match/yolov5-issue-2510.log'), 'utf8');

/** Real logs of the knowledge base (one per rule, the Chinese-language OOM reports too): their diagnoses in zh are zh. */
const REAL_LOGS = [
  ...readdirSync(join(PROJECT_ROOT, 'knowledge'))
    .filter((id) => statSync(join(PROJECT_ROOT, 'knowledge', id)).isDirectory())
    .map((id) => `knowledge/${id}/match/${readdirSync(join(PROJECT_ROOT, 'knowledge', id, 'match')).sort()[0]}`),
  'knowledge/cuda-oom/match/irra-43-batch4-zh.log',
  'knowledge/cuda-oom/match/paddledetection-3949-batch2-zh.log',
];

/** Command lines that walk every command's replies: usage errors, refusals, the happy paths. */
const LINES: { line: string; admin?: boolean; bare?: boolean }[] = [
  { line: '/gpu' },
  { line: 'nosuchthing' },
  { line: 'statsu' },
  { line: 'help' },
  { line: 'diagnose' },
  { line: `diagnose ${oom}` },
  { line: 'diagnose hello there, all fine' },
  { line: 'status' },
  { line: 'mem' },
  { line: 'hosts' },
  { line: 'hosts list --bogus' },
  { line: 'hosts lst' },
  { line: 'hosts test' },
  { line: 'hosts test bad!name' },
  { line: 'hosts test gpu1' },
  { line: 'hosts add gpu2 nouser', admin: true },
  { line: 'hosts add gpu2 ml@10.0.0.6', admin: true },
  { line: 'hosts trust gpu1', admin: true },
  { line: 'hosts remove gpu2', admin: true },
  { line: 'hosts add gpu2 ml@10.0.0.6' },
  { line: 'digest' },
  { line: 'watch gpu1' },
  { line: 'chart gpu1' },
  // The leak watch with samples (labelled traces ending a minute ago): a creep, a flat 8-GPU run, an unknown host.
  { line: 'digest' },
  { line: 'watch gpu-creep-shared-gpu' },
  { line: 'chart gpu-creep-shared-gpu' },
  { line: 'chart gpu-creep-shared-gpu 0 12' },
  { line: 'chart gpu-ddp-8-flat 7' },
  { line: 'chart nosuchhost' },
  { line: 'fit 40G' },
  { line: 'fit 2000G' },
  { line: 'notify list' },
  { line: 'notify 40G 2 for 12h --shared' },
  { line: 'notify list' },
  { line: 'notify cancel 1' },
  { line: 'notify cancel 99' },
  { line: 'feedback up' },
  { line: `diagnose ${oom}` },
  { line: 'feedback up' },
  { line: 'feedback down' },
  { line: 'feedback up --days 3' },
  { line: 'feedback up nosuchid' },
  { line: 'feedback list', admin: true },
  { line: 'feedback list' },
  { line: 'whoami' },
  { line: 'whoami alice Alice Liddell' },
  { line: 'whoami alice' },
  { line: 'whoami pending', admin: true },
  { line: 'whoami approve 1', admin: true },
  { line: 'whoami' },
  { line: 'whoami bob' },
  { line: 'whoami reject bob', admin: true },
  { line: 'whoami reject 9', admin: true },
  { line: 'whoami pending', admin: true },
  { line: 'silence list' },
  { line: 'silence gpu1 0 2h' },
  { line: 'silence gpu9 2h', admin: true },
  { line: 'silence gpu1 2h', admin: true },
  { line: 'silence gpu1 0 30m', admin: true },
  { line: 'silence list' },
  { line: 'silence cancel 1' },
  { line: 'silence cancel 1', admin: true },
  { line: 'silence cancel 1', admin: true },
  // Usage errors: zod's messages and the words parsers' errors, made in English, shown in the asker's language.
  { line: 'watch bad!name' },
  { line: 'chart gpu1 99' },
  { line: 'chart gpu1 0 999' },
  { line: 'fit 40' },
  { line: 'fit 40X' },
  { line: 'fit 0G' },
  { line: 'fit 40G 99' },
  { line: 'fit 40G 2 999' },
  { line: 'notify 40G for' },
  { line: 'notify 40G for 999h' },
  { line: 'notify list x' },
  { line: 'notify cancel x' },
  { line: 'notify add' },
  { line: 'notify 40G zz' },
  { line: 'notify list --shared' },
  { line: 'silence gpu1 8d' },
  { line: 'silence gpu1 x 2h' },
  { line: 'silence cancel x' },
  { line: 'silence list x' },
  { line: 'silence gpu1' },
  { line: 'feedback list x' },
  { line: 'feedback sideways' },
  { line: 'feedback up --days 0' },
  // zod's own messages (a word where a number goes, too many words, a value not among the choices).
  { line: 'chart gpu1 abc' },
  { line: 'chart gpu1 --theme blue' },
  { line: 'watch' },
  { line: 'watch gpu1 gpu2' },
  { line: 'digest x' },
  { line: 'feedback up --days abc' },
  { line: 'hosts add gpu3 ml@h --key', admin: true },
  { line: 'whoami approve', admin: true },
  { line: 'whoami reject bad!user', admin: true },
  { line: 'whoami claim' },
  { line: 'whoami show x' },
  { line: 'whoami alice B@d!' },
  { line: 'hosts add gpu3 ml@h --trust bad', admin: true },
  ...REAL_LOGS.map((file) => ({ line: `diagnose ${readFileSync(join(PROJECT_ROOT, file), 'utf8')}` })),
  { line: 'help', bare: true },
  { line: 'status', bare: true },
  { line: 'mem', bare: true },
  { line: 'hosts', bare: true },
  { line: 'fit 40G', bare: true },
  { line: 'digest', bare: true },
  { line: 'watch gpu1', bare: true },
  { line: 'chart gpu1', bare: true },
  { line: 'notify list', bare: true },
  { line: 'silence list', bare: true },
  { line: 'feedback up', bare: true },
  { line: 'whoami', bare: true },
];

describe.each(LOCALES)('every command asked in %s', (locale: Locale) => {
  let deps: Awaited<ReturnType<typeof testDeps>>;
  let services: Services;
  let close: () => void;
  beforeAll(async () => {
    deps = await testDeps({ watch: true });
    const now = Date.now() - 60_000;
    await (deps.services.watch as WatchRuntime).store.insertPaced([...endingAt('creep-shared-gpu', now), ...endingAt('ddp-8-flat', now)]);
    (deps.services.watch as WatchRuntime).setSilences(SilenceStore.inDataDir(deps.dataDir));
    const owners = ownersFromConfig(deps.config, ClaimStore.inDataDir(deps.dataDir));
    const feedback = FeedbackStore.inDataDir(deps.dataDir);
    services = { ...deps.services, owners: owners.service, feedback };
    close = () => {
      owners.close();
      feedback.close();
    };
  });
  afterAll(() => close());

  it('answers from the catalogue, no key missing, no English sentence of it in zh', { timeout: 60_000 }, async () => {
    resetMissingKeys();
    const asked = new Set<string>();
    const prose: string[] = [];
    // Names are names in every language: the commands' and the tools' (OpenMMLab 2.x (mmdetection / ... on mmcv)).
    const commandNames = [...allCommands().map((c) => c.name), ...(services.rules.tools?.tools ?? []).map((tool) => tool.name)];
    for (const { line, admin, bare } of LINES) {
      const ctx: CommandContext = {
        platform: 'slack',
        userId: admin ? 'UADMIN' : 'UALICE',
        isAdmin: admin === true,
        channelId: 'C1',
        locale,
        services: bare ? { rules: services.rules } : services,
      };
      const { command, reply } = await deps.registry.dispatch(line, ctx);
      asked.add(command);
      const text = shown(reply, locale === 'zh');
      // English replies show no Chinese of ours (a Chinese log's own lines, quoted as evidence, aside).
      if (locale === 'en') expect(shown(reply, true), line.slice(0, 40)).not.toMatch(/[\u4e00-\u9fff]/);
      else {
        const leaked = englishFragments.filter(({ f }) => text.includes(f)).map(({ key, f }) => `${key}: "${f}"`);
        expect(leaked, `${line.slice(0, 40)} -> ${reply.title}`).toEqual([]);
        expect(text, `${line.slice(0, 40)} -> ${reply.title}`).toMatch(/[\u4e00-\u9fff]/);
        for (const run of englishRuns(text, commandNames)) prose.push(`${line.slice(0, 40)} -> ${run}`);
      }
    }
    expect(missingKeys()).toEqual([]);
    expect(prose).toEqual([]);
    // /gpu help fits 100 terminal columns (CJK and emoji take two; code lines get a 4-column indent).
    const help = (await deps.registry.dispatch('help', { platform: 'console', userId: 'me', isAdmin: true, locale, services })).reply;
    const lines = help.sections.flatMap((s) => [...(s.text ?? '').split('\n'), ...(s.code ?? '').split('\n').map((l) => '    ' + l)]);
    expect(lines.filter((l) => displayWidth(l) > 100)).toEqual([]);
    expect(lines.length).toBeGreaterThan(24);
    // Every command the bot has was asked.
    expect(
      allCommands()
        .filter((c) => !asked.has(c.name))
        .map((c) => c.name),
    ).toEqual([]);
  });
});
