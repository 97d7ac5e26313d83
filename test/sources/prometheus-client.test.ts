// The Prometheus HTTP client against a local HTTP server answering as the API does: the
// `status: "error"` envelope (400 bad_data, 422 execution, 503 unavailable), a server that never
// answers (timeout), a refused connection, a non-JSON proxy page, warnings, and the credentials sent
// (never shown in a message).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromClient, PrometheusError } from '../../src/sources/prometheus/client.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let handler: Handler = (_q, _b, res) => res.end();
let server: Server;
let url = '';
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const r of held) r.destroy();
  await new Promise((r) => server.close(r));
});

const json = (res: ServerResponse, status: number, obj: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
};

// Long enough for a local server's answer on a loaded CI box (the first request of a fresh worker took over
// 2 s with two files at once); the test of the timeout sets its own.
const client = (extra: Partial<ConstructorParameters<typeof PromClient>[0]> = {}) => new PromClient({ url, timeoutMs: 30_000, ...extra });

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(PrometheusError);
    return (e as Error).message;
  }
  throw new Error('expected a failure');
}

describe('PromClient', () => {
  it('posts the query and returns the vector with the API warnings', async () => {
    let seen = '';
    handler = (req, body, res) => {
      seen = `${req.method} ${req.url} ${body}`;
      json(res, 200, {
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: { __name__: 'up' }, value: [1, '1'] }] },
        warnings: ['remote read of store eu-1 failed: partial data'],
      });
    };
    const r = await client().query('up{job="node"}');
    expect(seen).toMatch(/^POST \/api\/v1\/query query=up%7Bjob%3D%22node%22%7D&timeout=30s$/);
    expect(r.result).toHaveLength(1);
    expect(r.warnings).toEqual(['remote read of store eu-1 failed: partial data']);
  });

  it('sends query_range with start, end and step, and keeps a path prefix', async () => {
    let seen = '';
    handler = (req, body, res) => {
      seen = `${req.url} ${body}`;
      json(res, 200, { status: 'success', data: { resultType: 'matrix', result: [] } });
    };
    await client({ url: `${url}/prom` }).queryRange('up', 100, 200, 15);
    expect(seen).toBe('/prom/api/v1/query_range query=up&start=100&end=200&step=15&timeout=30s');
  });

  it.each([
    [400, 'bad_data', 'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)'],
    [422, 'execution', 'expanding series: context deadline exceeded'],
    [503, 'unavailable', 'TSDB not ready'],
  ])('an HTTP %i error envelope is one line with its errorType and error', async (status, errorType, error) => {
    handler = (_q, _b, res) => json(res, status, { status: 'error', errorType, error });
    expect(await failure(client().query('up'))).toBe(`Prometheus at ${new URL(url).host} answered ${status} ${errorType}: ${error}`);
  });

  it('a status: error envelope with HTTP 200 is still an error', async () => {
    handler = (_q, _b, res) => json(res, 200, { status: 'error', errorType: 'timeout', error: 'query timed out in expression evaluation' });
    expect(await failure(client().query('up'))).toMatch(/answered 200 timeout: query timed out/);
  });

  it('a server that never answers times out at timeout_ms', async () => {
    handler = (_q, _b, res) => held.push(res);
    const t0 = Date.now();
    expect(await failure(client({ timeoutMs: 300 }).query('up'))).toBe(`Prometheus at ${new URL(url).host} timed out after 300 ms`);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a refused connection names the error code', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await failure(new PromClient({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 }).query('up'))).toMatch(/unreachable \(ECONNREFUSED\)/);
  });

  it('a proxy page that is not the API says so; 401 names the credentials, not their value', async () => {
    handler = (_q, _b, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    };
    expect(await failure(client().query('up'))).toMatch(/answered HTTP 502 without the API's JSON/);
    handler = (_q, _b, res) => {
      res.writeHead(401);
      res.end('Unauthorized');
    };
    const msg = await failure(client({ auth: { kind: 'bearer', token: 's3cret-token' } }).query('up'));
    expect(msg).toMatch(/refused the credentials \(HTTP 401\)/);
    expect(msg).not.toContain('s3cret');
  });

  it('a wrong result type is refused', async () => {
    handler = (_q, _b, res) => json(res, 200, { status: 'success', data: { resultType: 'scalar', result: [1, '1'] } });
    expect(await failure(client().query('1'))).toMatch(/answered a scalar result, not a vector/);
  });

  it('sends a bearer token or basic auth in the Authorization header', async () => {
    let auth = '';
    handler = (req, _b, res) => {
      auth = req.headers.authorization ?? '';
      json(res, 200, { status: 'success', data: { resultType: 'vector', result: [] } });
    };
    await client({ auth: { kind: 'bearer', token: 'tok' } }).query('up');
    expect(auth).toBe('Bearer tok');
    await client({ auth: { kind: 'basic', username: 'bot', password: 'pw' } }).query('up');
    expect(auth).toBe(`Basic ${Buffer.from('bot:pw').toString('base64')}`);
  });

  it('refuses credentials in the URL and non-http schemes', () => {
    expect(() => new PromClient({ url: 'http://u:p@prom:9090', timeoutMs: 1000 })).toThrow(/not in the url/);
    expect(() => new PromClient({ url: 'file:///etc/passwd', timeoutMs: 1000 })).toThrow(/http/);
  });
});
