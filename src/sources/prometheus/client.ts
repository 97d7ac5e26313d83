// Prometheus HTTP API client: /api/v1/query and /api/v1/query_range with Node's fetch, every request
// bounded by AbortSignal.timeout. Failures become one PrometheusError line: the `status: "error"`
// envelope's errorType and error (400 bad_data, 422 execution, 503 unavailable / timeout), a timeout, a
// refused connection, a body that is not the API's JSON. The token or password is never in a message.
import type { PromMatrixSeries, PromVectorSample } from './parse.js';

export class PrometheusError extends Error {}

export type PromAuth = { kind: 'bearer'; token: string } | { kind: 'basic'; username: string; password: string };

export interface PromClientOptions {
  /** Base URL of the server, e.g. http://prometheus:9090 (a path prefix is kept). */
  url: string;
  timeoutMs: number;
  auth?: PromAuth;
  /** For tests. */
  fetch?: typeof fetch;
}

export interface PromAnswer<T> {
  result: T[];
  /** The API's `warnings` (and `infos`), e.g. partial data from a federated or remote-read source. */
  warnings: string[];
}

/** Bodies larger than this are refused (a query over every series of a big fleet should not be). */
const MAX_BODY_BYTES = 64 * 2 ** 20;

const clean = (s: unknown, n = 200): string => {
  const t = String(s)
    .replace(/[\x00-\x1f\x7f]/g, ' ')
    .trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
};

export class PromClient {
  private base: URL;
  constructor(private opts: PromClientOptions) {
    const u = new URL(opts.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PrometheusError('the Prometheus url must be http:// or https://');
    if (u.username || u.password) throw new PrometheusError('put Prometheus credentials in the environment (basic_auth / bearer_token_env), not in the url');
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    this.base = u;
  }

  /** Where the server is, for messages: scheme, host and port only. */
  get where(): string {
    return this.base.host;
  }

  query(expr: string, timeS?: number): Promise<PromAnswer<PromVectorSample>> {
    const body = new URLSearchParams({ query: expr });
    if (timeS !== undefined) body.set('time', String(timeS));
    return this.post('api/v1/query', body, 'vector');
  }

  queryRange(expr: string, startS: number, endS: number, stepS: number): Promise<PromAnswer<PromMatrixSeries>> {
    const body = new URLSearchParams({ query: expr, start: String(startS), end: String(endS), step: String(stepS) });
    return this.post('api/v1/query_range', body, 'matrix');
  }

  private async post<T>(path: string, body: URLSearchParams, want: 'vector' | 'matrix'): Promise<PromAnswer<T>> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const auth = this.opts.auth;
    if (auth?.kind === 'bearer') headers.authorization = `Bearer ${auth.token}`;
    else if (auth?.kind === 'basic') headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    // Also tell the server how long we wait, so it stops evaluating when we stop listening.
    body.set('timeout', `${Math.max(1, Math.floor(this.opts.timeoutMs / 1000))}s`);
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(new URL(path, this.base), {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError')
        throw new PrometheusError(`Prometheus at ${this.where} timed out after ${this.opts.timeoutMs} ms`);
      const code = err.cause?.code ?? (err.cause?.message ? clean(err.cause.message, 80) : undefined);
      throw new PrometheusError(`Prometheus at ${this.where} unreachable${code ? ` (${code})` : `: ${clean(err.message, 120)}`}`);
    }
    let text: string;
    try {
      const len = Number(res.headers.get('content-length') ?? 0);
      if (len > MAX_BODY_BYTES) throw new PrometheusError(`Prometheus answer too large (${len} bytes)`);
      text = await res.text();
    } catch (e) {
      if (e instanceof PrometheusError) throw e;
      const err = e as Error;
      if (err.name === 'TimeoutError' || err.name === 'AbortError')
        throw new PrometheusError(`Prometheus at ${this.where} timed out after ${this.opts.timeoutMs} ms`);
      throw new PrometheusError(`Prometheus at ${this.where}: answer cut off (${clean(err.message, 120)})`);
    }
    if (text.length > MAX_BODY_BYTES) throw new PrometheusError(`Prometheus answer too large (${text.length} bytes)`);
    let json: {
      status?: string;
      errorType?: string;
      error?: string;
      warnings?: unknown;
      infos?: unknown;
      data?: { resultType?: string; result?: unknown };
    };
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      if (res.status === 401 || res.status === 403) throw new PrometheusError(`Prometheus at ${this.where} refused the credentials (HTTP ${res.status})`);
      throw new PrometheusError(
        `Prometheus at ${this.where} answered HTTP ${res.status} without the API's JSON${res.ok ? '' : ` (${clean(res.statusText, 60)})`}`,
      );
    }
    if (json.status === 'error' || !res.ok) {
      // 400 bad_data (bad query, too many points), 422 execution (query failed), 503 unavailable/timeout/canceled.
      const what = json.errorType ? `${clean(json.errorType, 40)}: ${clean(json.error ?? '', 200)}` : clean(res.statusText, 60);
      throw new PrometheusError(`Prometheus at ${this.where} answered ${res.status} ${what}`);
    }
    const data = json.data;
    if (!data || data.resultType !== want || !Array.isArray(data.result))
      throw new PrometheusError(`Prometheus at ${this.where} answered a ${clean(data?.resultType ?? 'missing', 20)} result, not a ${want}`);
    const warnings = [json.warnings, json.infos].flatMap((w) => (Array.isArray(w) ? w.slice(0, 10).map((x) => clean(x, 200)) : []));
    return { result: data.result as T[], warnings };
  }
}
