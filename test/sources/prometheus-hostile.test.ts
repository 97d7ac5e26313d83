// Issue 22 items 3, 4, 5 and 6 through the bot itself: `bin/gpu-doctor bot` (the console chat over a
// pipe; its stderr is the log) with one config holding a real sshd host and `source: prometheus` groups
// whose server (test/sources/fake-prometheus.ts) misbehaves as a Prometheus or the proxy in front of
// it can: it echoes the Authorization header in a 401's JSON, a 500's status text and body, a 400's
// error field and the warnings; it streams an endless body; it answers null items, `metric: null` and
// an object label value next to good series; it sends thousands of `; `-separated warnings to a zh chat.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/sources/prometheus/client.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { answerFor, dcgmSeries, json, startFakePrometheus, streamForever, type FakePrometheus } from './fake-prometheus.js';

const TOKEN = 'prom-Bearer-t0ken-8f3a9c1e77d2';
const USER = 'gpu-bot';
const PASSWORD = 'hunter2-Basic-pw!';
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** What must appear nowhere: the credentials, their base64, and the base64 of the whole headers that carry them (less the first group, which mixes in the scheme's letters). */
const LEAKS = [TOKEN, b64(TOKEN), b64(TOKEN).replace(/=+$/, ''), BASIC, PASSWORD, b64(`Basic ${BASIC}`).slice(8, -4), b64(`Bearer ${TOKEN}`).slice(8, -4)];

/** Bots still running (a test that timed out): killed at the end. */
const running = new Set<ReturnType<typeof spawn>>();

/** The bot's console chat with `lines` typed; resolves with what it printed (stdout) and logged (stderr) once it answered them all and exited. */
function chat(config: string, lines: string[], env: Record<string, string> = {}): Promise<{ out: string; log: string }> {
  const child = spawn('bin/gpu-doctor', ['bot'], {
    env: {
      ...process.env,
      SLACK_BOT_TOKEN: '',
      DISCORD_TOKEN: '',
      LC_ALL: '',
      LC_MESSAGES: '',
      LANG: 'C.UTF-8',
      GPU_DOCTOR_CONFIG: config,
      PROM_TOKEN: TOKEN,
      PROM_PASSWORD: PASSWORD,
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let log = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (log += d));
  // The console answers one line after the other: the unknown command's answer comes after every line before it.
  child.stdin.write([...lines, '/gpu end-of-test'].join('\n') + '\n');
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (out.includes('end-of-test')) {
        clearInterval(poll);
        child.once('exit', () => resolve({ out, log }));
        child.stdin.end();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      if (!out.includes('end-of-test')) reject(new Error(`bot exited (${code}) before answering:\n${out}\n${log}`));
    });
  });
}

const hostsLine = (name: string, ip: string) => `      - { name: ${name}, match: "${ip}" }`;
function group(name: string, url: string, hosts: [string, string][], auth: 'bearer' | 'basic' | 'none', extra: string[] = []): string[] {
  return [
    `  - name: ${name}`,
    '    source: prometheus',
    `    url: ${url}`,
    ...(auth === 'bearer'
      ? ['    bearer_token_env: PROM_TOKEN']
      : auth === 'basic'
        ? [`    basic_auth: { username: ${USER}, password_env: PROM_PASSWORD }`]
        : []),
    ...extra,
    '    hosts:',
    ...hosts.map(([n, ip]) => hostsLine(n, ip)),
  ];
}

describeWithSshd('a hostile Prometheus against the bot', 'test/sources/prometheus-hostile.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-promhostile-'));
  let fake: FakePrometheus;
  let sshd: SshdInstance;
  let en: { out: string; log: string };

  beforeAll(async () => {
    fake = await startFakePrometheus();
    const echo = (r: { authorization: string }) => `Authorization: ${r.authorization} (${Buffer.from(r.authorization).toString('base64')})`;
    fake.on('echo401', (r, res) => json(res, 401, { status: 'error', errorType: 'unauthorized', error: `invalid credentials, ${echo(r)}` }));
    fake.on('echo500', (r, res) => {
      res.writeHead(500, `Upstream refused ${r.authorization}`, { 'content-type': 'text/plain' });
      res.end(`proxy error: ${echo(r)}`);
    });
    fake.on('echo400', (r, res) => json(res, 400, { status: 'error', errorType: 'bad_data', error: `header ${echo(r)} not accepted` }));
    fake.on('echowarn', (r, res) =>
      r.path.endsWith('query_range')
        ? json(res, 200, { status: 'success', data: { resultType: 'matrix', result: [] }, warnings: [`seen ${echo(r)}`] })
        : json(res, 200, answerFor(r, ['10.2.0.4'], { warnings: [`remote read saw ${echo(r)}`] })),
    );
    fake.on('endless', (r, res, st) =>
      r.path.endsWith('query_range')
        ? json(res, 200, { status: 'success', data: { resultType: 'matrix', result: [] } })
        : streamForever(res, st, '{"status":"success","data":{"resultType":"vector","result":[', 4 * MAX_BODY_BYTES),
    );
    // One null item, one `metric: null`, one object label value (host m1's), beside good series of m1 and m2.
    fake.on('broken', (r, res) => {
      if (r.path.endsWith('query_range')) return json(res, 200, { status: 'success', data: { resultType: 'matrix', result: [null] } });
      const [good] = dcgmSeries('10.1.0.1');
      json(
        res,
        200,
        answerFor(r, ['10.1.0.1', '10.1.0.2'], {
          gpu: [null, { metric: null, value: [1, '1'] }, { metric: { ...good.metric, gpu: { nested: true } }, value: [1, '7'] }],
          node: [null],
        }),
      );
    });

    const key = makeClientKey(join(root, 'client'));
    sshd = await startSshd(join(root, 'sshd'), key.pub, { skipShellRc: true });
    const cfg = join(root, 'en.yaml');
    writeFileSync(
      cfg,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        // Generous: on a loaded machine the real sshd is slow to answer, and the SSH host must be answered.
        '  connect_timeout_ms: 30000',
        '  exec_timeout_ms: 60000',
        // The backfill at start reads every group's history: its warnings are logged.
        'watch: { enabled: true, sample_interval_s: 3600 }',
        'host_groups:',
        '  - name: lab',
        '    source: ssh',
        '    hosts:',
        `      - { name: ssh-h200, host: 127.0.0.1, port: ${sshd.port}, host_key: "${sshd.fingerprint}" }`,
        ...group('echo401', fake.url('echo401'), [['e401', '10.2.0.1']], 'bearer'),
        ...group('echo500', fake.url('echo500'), [['e500', '10.2.0.2']], 'basic'),
        ...group('echo400', fake.url('echo400'), [['e400', '10.2.0.3']], 'bearer'),
        ...group('echowarn', fake.url('echowarn'), [['ewarn', '10.2.0.4']], 'basic'),
        ...group('endless', fake.url('endless'), [['endless1', '10.3.0.1']], 'none', ['    timeout_ms: 60000']),
        ...group(
          'broken',
          fake.url('broken'),
          [
            ['m1', '10.1.0.1'],
            ['m2', '10.1.0.2'],
          ],
          'none',
        ),
        '',
      ].join('\n'),
    );
    en = await chat(cfg, ['/gpu status']);
  }, 240_000);

  afterAll(async () => {
    for (const c of running) c.kill('SIGKILL');
    await sshd?.stop();
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a server echoing the Authorization header (401 JSON, 500 status text and body, 400 error field, warnings) gets no credential shown or logged', () => {
    for (const g of ['echo401', 'echo500', 'echo400', 'echowarn']) expect(fake.stats(g).requests, g).toBeGreaterThan(0);
    const { out, log } = en;
    for (const secret of LEAKS) {
      expect(out, 'reply').not.toContain(secret);
      expect(log, 'log').not.toContain(secret);
    }
    // The echoes did arrive, as the marker where the credential was.
    expect(out).toMatch(/e401: .*answered 401 unauthorized: invalid credentials, Authorization: Bearer \[redacted\] \(.*\[redacted\]/);
    expect(out).toMatch(/e500: .*answered HTTP 500 without the API's JSON \(Upstream refused Basic \[redacted\]\)/);
    expect(out).toMatch(/e400: .*answered 400 bad_data: header Authorization: Bearer \[redacted\]/);
    expect(out).toMatch(/\n⚠ .*Prometheus warns \(data may be partial\): remote read saw Authorization: Basic \[redacted\] \(.*\[redacted\]\)/);
    expect(log).toMatch(/Prometheus history: echo401: .*\[redacted\]/);
  });

  it('an endless body is refused at the size cap with one line: the read stops there, not at the timeout', () => {
    const st = fake.stats('endless');
    // What the server got written before the client hung up: the cap, plus what sockets buffer on the way.
    expect(st.maxAnswerBytes).toBeGreaterThan(MAX_BODY_BYTES);
    expect(st.maxAnswerBytes).toBeLessThan(MAX_BODY_BYTES + 16 * 2 ** 20);
    expect(st.clientClosed).toBe(true);
    expect(en.out).toMatch(/endless1: Prometheus at [^ ]+: answer over 64 MiB refused \(stopped reading at the cap\)/);
  });

  it('malformed items cost themselves: each host answers, with one line naming what was skipped, and the SSH host is answered', () => {
    const { out } = en;
    expect(out).toMatch(/ssh-h200 \(\d+ ms\):\n.*\n.*\n0 +NVIDIA H200 /);
    // m1 and m2 read their GPU as usual; each names the items nobody's (the null ones) that were skipped,
    // m1 also its own bad item (an object label value).
    for (const [host, n] of [
      ['m1', 4],
      ['m2', 3],
    ] as const) {
      expect(out).toMatch(new RegExp(`\\n${host} \\(\\d+ ms\\):\\n.*\\n.*\\n0 +\\? +\\S+ 4845/40535 MiB`));
      expect(out).toMatch(new RegExp(`\\n⚠ [^\\n]*skipped ${n} malformed items of Prometheus' answer \\(#\\d+: item is null, #\\d+: metric is null`));
    }
    expect(out).toMatch(/skipped 4 malformed items [^\n]*label gpu is object/);
    expect(out).not.toMatch(/went wrong|Cannot read properties/);
  });
});

describeWithSshd('Prometheus warnings in a zh chat', 'test/sources/prometheus-hostile.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-promzh-'));
  let fake: FakePrometheus;

  beforeAll(async () => {
    fake = await startFakePrometheus();
  });
  afterAll(async () => {
    for (const c of running) c.kill('SIGKILL');
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  // Ten warnings per answer (what the client keeps), each 200 characters of `; `-separated parts: about
  // 2,000 parts in each host's warning line, four hosts. The warning travels as a message whose list is
  // the exporter's own words (issue 24 §2): nothing is matched back, so the parts are shown as they came
  // and the answer is at once (trying every run of parts, as an English-matching reply once did, is cubic:
  // the test's generous timeout is what fails such code).
  it('warning lines of about 2,000 `; `-separated parts are answered, in Chinese, the foreign parts as they came', { timeout: 300_000 }, async () => {
    const hosts: [string, string][] = [1, 2, 3, 4].map((i) => [`w${i}`, `10.4.0.${i}`]);
    const warning = (tag: string, i: number) => `${tag}${i}: x` + '; '.repeat(100);
    fake.on('warns', (r, res) =>
      json(
        res,
        200,
        answerFor(
          r,
          hosts.map(([, ip]) => ip),
          { warnings: Array.from({ length: 10 }, (_, i) => warning(r.query.includes('node_memory_') ? 'n' : 'g', i)) },
        ),
      ),
    );
    const cfg = join(root, 'zh.yaml');
    writeFileSync(cfg, [`data_dir: ${join(root, 'data')}`, 'host_groups:', ...group('warns', fake.url('warns'), hosts, 'none'), ''].join('\n'));
    const { out } = await chat(cfg, ['/gpu status'], { LANG: 'zh_CN.UTF-8' });
    expect(out).toContain('Prometheus 警告（数据可能不完整）：g0: x; ; ; ');
    expect(out).toContain('; n9: x; ; ');
    expect(out.split('; ').length).toBeGreaterThan(4 * 1900);
    for (const [name] of hosts) expect(out).toMatch(new RegExp(`\\n${name} \\(\\d+ ms\\):\\n.*\\n.*\\n0 +\\? +\\S+ 4845/40535 MiB`));
  });
});
