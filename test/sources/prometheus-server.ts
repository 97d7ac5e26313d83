// A real Prometheus (Debian's `prometheus` package: the plain binary, never its service) on a random
// 127.0.0.1 port with a temporary config and TSDB, scraping local HTTP targets. Free of vitest, so the
// benchmarks (bench/prometheus-status.ts) start the same server the tests do.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PromClient } from '../../src/sources/prometheus/client.js';
import { freePort } from '../hosts/sshd-harness.js';

export const PROMETHEUS = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => existsSync(p)) ?? null;
export const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p)) ?? null;

/** An exporter stand-in: serves `text` at /metrics on host:random port. */
export async function serveMetrics(host: string, text: string): Promise<{ target: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    target: `${host}:${port}`,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface PrometheusInstance {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export interface ScrapeJob {
  job: string;
  targets: string[];
  /** Keep the target's own `instance` / `job` labels (one target exposing many hosts, as a federating or pushgateway-like target does). */
  honorLabels?: boolean;
}

/** Starts Prometheus scraping these jobs every second (or every `scrapeIntervalS`); resolves once it is ready. */
export async function startPrometheus(
  dir: string,
  jobs: ScrapeJob[],
  extraArgs: string[] = [],
  opts: { scrapeIntervalS?: number } = {},
): Promise<PrometheusInstance> {
  if (!PROMETHEUS) throw new Error('prometheus not installed');
  mkdirSync(dir, { recursive: true });
  const cfg = join(dir, 'prometheus.yml');
  writeFileSync(
    cfg,
    [
      'global:',
      `  scrape_interval: ${opts.scrapeIntervalS ?? 1}s`,
      `  scrape_timeout: ${Math.round((opts.scrapeIntervalS ?? 1) * 900)}ms`,
      `  evaluation_interval: ${opts.scrapeIntervalS ?? 1}s`,
      'scrape_configs:',
      ...jobs.flatMap((j) => [
        `  - job_name: ${j.job}`,
        ...(j.honorLabels ? ['    honor_labels: true'] : []),
        '    static_configs:',
        `      - targets: [${j.targets.map((t) => `'${t}'`).join(', ')}]`,
      ]),
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const proc = spawn(
    PROMETHEUS,
    [`--config.file=${cfg}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', ...extraArgs],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      proc.kill('SIGKILL');
    }
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited (${proc.exitCode}):\n${stderr}`);
    try {
      const r = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready after 30 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, proc, stop };
}

/** Waits (bounded) until `expr` returns at least `n` series, e.g. every target up with series in the TSDB. */
export async function waitForSeries(url: string, expr: string, n: number, timeoutMs = 30_000): Promise<void> {
  const client = new PromClient({ url, timeoutMs: 2000 });
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  for (;;) {
    try {
      last = (await client.query(expr)).result.length;
      if (last >= n) return;
    } catch {
      /* starting */
    }
    if (Date.now() > deadline) throw new Error(`${expr}: ${last} series after ${timeoutMs} ms, wanted ${n}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
