// Measures the real bot process (`node bin/gpu-doctor bot`) with both adapters connected to local
// fakes (Slack HTTP mode + Discord gateway/REST): slash-command ack latency (p50/p99, Slack and
// Discord) while a slow host is being queried, and idle resident memory.
//   npm run build && npx tsx scripts/measure-adapters.ts [N]
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeSlack } from '../test/adapters/fake-slack.js';
import { FakeDiscord } from '../test/adapters/fake-discord.js';

const N = Number(process.argv[2] ?? 300);
const SECRET = 'measure-signing-secret';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const slack = await new FakeSlack().start();
const discord = await new FakeDiscord().start();
const dir = mkdtempSync(join(tmpdir(), 'gpu-doctor-measure-'));
// "slow" is a blackholed address: /gpu status slow waits for the SSH connect timeout.
writeFileSync(join(dir, 'config.yaml'), `data_dir: ${dir}/data\nhosts:\n  - { name: slow, host: 10.255.255.1, user: ml }\nssh: { connect_timeout_ms: 8000 }\n`);
const appPort = 3900 + Math.floor(Math.random() * 50);
const healthPort = appPort + 100;
const bot = spawn(process.execPath, ['bin/gpu-doctor', 'bot', '--config', join(dir, 'config.yaml')], {
  env: {
    ...process.env,
    LOG_LEVEL: 'warn',
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: `${slack.base}/api/`,
    PORT: String(appPort),
    DISCORD_TOKEN: 'fake.discord.token',
    DISCORD_API_URL: `${discord.base}/api`,
    HEALTH_PORT: String(healthPort),
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  const t0 = Date.now();
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${healthPort}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() - t0 > 30000) throw new Error('bot did not become healthy');
    await sleep(100);
  }
  console.log(`both adapters connected after ${Date.now() - t0} ms`);
  await sleep(5000);
  const idle = rssMiB(bot.pid!);

  const url = `http://127.0.0.1:${appPort}/slack/events`;
  const slash = async (text: string) => {
    const body = new URLSearchParams({
      team_id: 'T1',
      channel_id: 'C1',
      user_id: 'U1',
      command: '/gpu',
      text,
      response_url: `${slack.base}/response/1`,
      trigger_id: 't',
    }).toString();
    const ts = Math.floor(Date.now() / 1000);
    const sig = 'v0=' + createHmac('sha256', SECRET).update(`v0:${ts}:${body}`).digest('hex');
    const s = performance.now();
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-signature': sig, 'x-slack-request-timestamp': String(ts) },
      body,
    });
    await r.text();
    return performance.now() - s;
  };
  // Warm-up, then N acks with a slow-host status in flight every 10th request.
  for (let i = 0; i < 20; i++) await slash('help');
  const slackMs: number[] = [];
  const slowMs: number[] = [];
  for (let i = 0; i < N; i++) {
    if (i % 10 === 0) slowMs.push(await slash('status slow'));
    slackMs.push(await slash(i % 3 === 0 ? 'hosts list' : i % 3 === 1 ? 'help' : 'diagnose RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB'));
  }
  const discordMs: number[] = [];
  for (let i = 0; i < Math.min(N, 200); i++) {
    const id = String(5000 + i);
    const before = discord.calls.length;
    const s = performance.now();
    discord.interaction(id, i % 2 ? 'help' : 'status', i % 2 ? [] : [{ name: 'host', type: 3, value: 'slow' }]);
    while (!discord.calls.slice(before).some((c) => c.path.includes(`/interactions/${id}/`))) await sleep(1);
    discordMs.push(performance.now() - s);
  }
  const busy = rssMiB(bot.pid!);
  console.log(
    JSON.stringify(
      {
        slack_ack_ms: { n: slackMs.length, p50: +pct(slackMs, 50).toFixed(1), p99: +pct(slackMs, 99).toFixed(1), max: +Math.max(...slackMs).toFixed(1) },
        slack_ack_slow_status_ms: { n: slowMs.length, p50: +pct(slowMs, 50).toFixed(1), p99: +pct(slowMs, 99).toFixed(1) },
        discord_ack_ms: { n: discordMs.length, p50: +pct(discordMs, 50).toFixed(1), p99: +pct(discordMs, 99).toFixed(1) },
        idle_rss_mib: +idle.toFixed(1),
        rss_after_load_mib: +busy.toFixed(1),
      },
      null,
      2,
    ),
  );
} finally {
  bot.kill('SIGTERM');
  const code = await new Promise<string | number | null>((r) => bot.once('exit', (c, s) => r(c ?? s)));
  console.log(`bot exited on SIGTERM: ${code}`);
  await slack.close();
  await discord.close();
}
