// A local HTTP server answering /api/v1/query and /api/v1/query_range as Prometheus (or a proxy in
// front of it) would, one behaviour per URL path prefix: a group's `url: http://127.0.0.1:PORT/NAME`
// gets the behaviour registered under NAME. The series it serves are the real exporter output of
// test/fixtures/prometheus, labelled per host; the hostile answers are built around them. It counts the
// requests and the bytes it managed to write per behaviour, so tests assert what the client read,
// not how long it took.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PromVectorSample } from '../../src/sources/prometheus/parse.js';
import { exposition, fixtureText } from './exposition.js';

export interface FakeRequest {
  path: string;
  query: string;
  params: URLSearchParams;
  authorization: string;
}

export type Behaviour = (req: FakeRequest, res: ServerResponse, stats: BehaviourStats) => void | Promise<void>;

export interface BehaviourStats {
  requests: number;
  bytesWritten: number;
  /** The most bytes one streamed answer got written. */
  maxAnswerBytes: number;
  /** Whether the client closed the connection before the answer was complete. */
  clientClosed: boolean;
}

export interface FakePrometheus {
  /** The base URL of behaviour `name`. */
  url(name: string): string;
  on(name: string, behaviour: Behaviour): void;
  stats(name: string): BehaviourStats;
  close(): Promise<void>;
}

export async function startFakePrometheus(): Promise<FakePrometheus> {
  const behaviours = new Map<string, Behaviour>();
  const stats = new Map<string, BehaviourStats>();
  const open = new Set<ServerResponse>();
  const statsOf = (name: string) => {
    let s = stats.get(name);
    if (!s) stats.set(name, (s = { requests: 0, bytesWritten: 0, maxAnswerBytes: 0, clientClosed: false }));
    return s;
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const [, name, ...rest] = (req.url ?? '/').split('?')[0].split('/');
      const behaviour = behaviours.get(name);
      if (!behaviour) {
        res.writeHead(404).end();
        return;
      }
      const st = statsOf(name);
      st.requests++;
      open.add(res);
      res.on('close', () => {
        open.delete(res);
        if (!res.writableFinished) st.clientClosed = true;
      });
      const params = new URLSearchParams(body);
      void behaviour({ path: `/${rest.join('/')}`, query: params.get('query') ?? '', params, authorization: req.headers.authorization ?? '' }, res, st);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (name) => `${base}/${name}`,
    on: (name, b) => void behaviours.set(name, b),
    stats: statsOf,
    close: async () => {
      for (const r of open) r.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export const json = (res: ServerResponse, status: number, obj: unknown, statusText?: string): void => {
  const text = JSON.stringify(obj);
  res.writeHead(status, statusText ?? '', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

/** dcgm-exporter's A100 sample for host `ip` (GPU 0 uses `usedMiB`), on its exporter's port. */
export function dcgmSeries(ip: string, usedMiB = 4845): PromVectorSample[] {
  return exposition(fixtureText('dcgm-exporter-a100.prom'), { instance: `${ip}:9400`, job: 'dcgm' }).map((s) =>
    s.metric.__name__ === 'DCGM_FI_DEV_FB_USED' ? { ...s, value: [s.value[0], String(usedMiB)] } : s,
  );
}

/** node_exporter's meminfo for host `ip`. */
export const nodeSeries = (ip: string): PromVectorSample[] => exposition(fixtureText('node-exporter-e2e-memory.prom'), { instance: `${ip}:9100`, job: 'node' });

/** A success envelope with the GPU series (or, for the node query, the node series) of these hosts. */
export function answerFor(req: FakeRequest, ips: string[], extra: { gpu?: unknown[]; node?: unknown[]; warnings?: string[] } = {}): unknown {
  const isNode = req.query.includes('node_memory_');
  const result = isNode ? [...ips.flatMap(nodeSeries), ...(extra.node ?? [])] : [...ips.flatMap((ip) => dcgmSeries(ip)), ...(extra.gpu ?? [])];
  return { status: 'success', data: { resultType: 'vector', result }, ...(extra.warnings ? { warnings: extra.warnings } : {}) };
}

/** Writes `chunk` until the client stops reading (or `limitBytes` is reached), honouring backpressure; counts what was written. */
export async function streamForever(res: ServerResponse, st: BehaviourStats, head: string, limitBytes: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(head);
  let written = head.length;
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  while (!res.destroyed && written < limitBytes) {
    written += chunk.length;
    st.bytesWritten += chunk.length;
    st.maxAnswerBytes = Math.max(st.maxAnswerBytes, written);
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
  if (!res.destroyed) res.end(']}}');
}
