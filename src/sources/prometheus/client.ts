// Prometheus HTTP API client: /api/v1/query and /api/v1/query_range with Node's fetch. One deadline
// (timeout_ms) covers the whole request, the body included; the body is read chunk by chunk and the
// request aborted the moment it passes the size cap, so an endless or huge answer costs at most the
// cap. Failures become one PrometheusError line: the `status: "error"` envelope's errorType and error
// (400 bad_data, 422 execution, 503 unavailable / timeout), a timeout, a refused connection, a body that
// is not the API's JSON. Whatever the server's text says is scrubbed of the credentials (a proxy may
// echo the Authorization header) before it is cut short, so no part of a token survives in a message.
import { scrub } from '../../core/secret-scrub.js';
import type { PromMatrixSeries, PromVectorSample } from './parse.js';

export class PrometheusError extends Error {}

export type PromAuth = { kind: 'bearer'; token: string } | { kind: 'basic'; username: string; password: string };

export interface PromClientOptions {
  /** Base URL of the server, e.g. http://prometheus:9090 (a path prefix is kept). */
  url: string;
  timeoutMs: number;
  auth?: PromAuth;
  /** Answers larger than this are refused while they are read (default 64 MiB). */
  maxBodyBytes?: number;
  /** For tests. */
  fetch?: typeof fetch;
}

export interface PromAnswer<T> {
  result: T[];
  /** The API's `warnings` (and `infos`), e.g. partial data from a federated or remote-read source. */
  warnings: string[];
}

export interface PromQueryLimits {
  /** Answers with more series than this are refused before they are parsed (a query matching far more than the hosts asked). */
  maxSeries?: number;
}

/** Bodies larger than this are refused (a query over every series of a big fleet should not be). */
export const MAX_BODY_BYTES = 64 * 2 ** 20;
/** Series an answer may hold unless the caller says otherwise. */
export const DEFAULT_MAX_SERIES = 500_000;

const clean = (s: unknown, n = 200): string => {
  const t = String(s)
    .replace(/[\x00-\x1f\x7f]/g, ' ')
    .trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
};

/** How many `"metric":` keys a JSON text holds: inside a JSON string the quotes are escaped, so only keys count. Linear. */
export function countMetricKeys(text: string, stopAfter = Infinity): number {
  let n = 0;
  for (let i = text.indexOf('"metric":'); i !== -1 && n <= stopAfter; i = text.indexOf('"metric":', i + 9)) n++;
  return n;
}

const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`;

export class PromClient {
  private base: URL;
  private readonly maxBodyBytes: number;
  constructor(private opts: PromClientOptions) {
    const u = new URL(opts.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PrometheusError('the Prometheus url must be http:// or https://');
    if (u.username || u.password) throw new PrometheusError('put Prometheus credentials in the environment (basic_auth / bearer_token_env), not in the url');
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    this.base = u;
    this.maxBodyBytes = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  }

  /** Where the server is, for messages: scheme, host and port only. */
  get where(): string {
    return this.base.host;
  }

  /** The credentials this client sends, as the scrubber looks for them (with the user for basic auth: the header's base64 of user:password). */
  private credentials(): string[] {
    const auth = this.opts.auth;
    if (auth?.kind === 'bearer') return [auth.token];
    if (auth?.kind === 'basic') return [auth.password, `${auth.username}:${auth.password}`];
    return [];
  }

  /** Server-provided text, scrubbed of credentials and then made one short line. */
  private said(s: unknown, n: number): string {
    return clean(scrub(String(s), this.credentials()), n);
  }

  query(expr: string, timeS?: number, limits: PromQueryLimits = {}): Promise<PromAnswer<PromVectorSample>> {
    const body = new URLSearchParams({ query: expr });
    if (timeS !== undefined) body.set('time', String(timeS));
    return this.post('api/v1/query', body, 'vector', limits);
  }

  queryRange(expr: string, startS: number, endS: number, stepS: number, limits: PromQueryLimits = {}): Promise<PromAnswer<PromMatrixSeries>> {
    const body = new URLSearchParams({ query: expr, start: String(startS), end: String(endS), step: String(stepS) });
    return this.post('api/v1/query_range', body, 'matrix', limits);
  }

  private timedOut(): PrometheusError {
    return new PrometheusError(`Prometheus at ${this.where} timed out after ${this.opts.timeoutMs} ms`);
  }

  /** The body, read chunk by chunk under the size cap and the request's deadline; over the cap the request is aborted. */
  private async readBody(res: Response, abort: AbortController): Promise<string> {
    const len = Number(res.headers.get('content-length') ?? 0);
    if (len > this.maxBodyBytes) {
      abort.abort();
      throw new PrometheusError(`Prometheus at ${this.where}: answer of ${mib(len)} refused (over ${mib(this.maxBodyBytes)})`);
    }
    if (!res.body) return '';
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > this.maxBodyBytes) {
        // Stop reading and close the connection: the rest of the answer is never downloaded.
        abort.abort();
        await reader.cancel().catch(() => undefined);
        throw new PrometheusError(`Prometheus at ${this.where}: answer over ${mib(this.maxBodyBytes)} refused (stopped reading at the cap)`);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }

  private async post<T>(path: string, body: URLSearchParams, want: 'vector' | 'matrix', limits: PromQueryLimits): Promise<PromAnswer<T>> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const auth = this.opts.auth;
    if (auth?.kind === 'bearer') headers.authorization = `Bearer ${auth.token}`;
    else if (auth?.kind === 'basic') headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    // Also tell the server how long we wait, so it stops evaluating when we stop listening.
    body.set('timeout', `${Math.max(1, Math.floor(this.opts.timeoutMs / 1000))}s`);
    // One deadline for the whole request (connect, headers and body); `abort` ends it early (the cap).
    const abort = new AbortController();
    const signal = AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), abort.signal]);
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(new URL(path, this.base), { method: 'POST', headers, body, signal, redirect: 'error' });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw this.timedOut();
      const code = err.cause?.code ?? (err.cause?.message ? this.said(err.cause.message, 80) : undefined);
      throw new PrometheusError(`Prometheus at ${this.where} unreachable${code ? ` (${code})` : `: ${this.said(err.message, 120)}`}`);
    }
    let text: string;
    try {
      text = await this.readBody(res, abort);
    } catch (e) {
      if (e instanceof PrometheusError) throw e;
      const err = e as Error;
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw this.timedOut();
      throw new PrometheusError(`Prometheus at ${this.where}: answer cut off (${this.said(err.message, 120)})`);
    }
    const maxSeries = limits.maxSeries ?? DEFAULT_MAX_SERIES;
    // Counted before parsing: an answer far larger than the hosts asked costs no parse (JSON.parse of 64 MiB is ~10x that in objects).
    if (countMetricKeys(text, maxSeries) > maxSeries)
      throw new PrometheusError(
        `Prometheus at ${this.where}: answer of more than ${maxSeries} series refused (the query matched far more than the hosts asked)`,
      );
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
        `Prometheus at ${this.where} answered HTTP ${res.status} without the API's JSON${res.ok ? '' : ` (${this.said(res.statusText, 60)})`}`,
      );
    }
    if (!json || typeof json !== 'object') throw new PrometheusError(`Prometheus at ${this.where} answered HTTP ${res.status} without the API's JSON`);
    if (json.status === 'error' || !res.ok) {
      // 400 bad_data (bad query, too many points), 422 execution (query failed), 503 unavailable/timeout/canceled.
      const what = json.errorType ? `${this.said(json.errorType, 40)}: ${this.said(json.error ?? '', 200)}` : this.said(res.statusText, 60);
      throw new PrometheusError(`Prometheus at ${this.where} answered ${res.status} ${what}`);
    }
    const data = json.data;
    if (!data || typeof data !== 'object' || data.resultType !== want || !Array.isArray(data.result))
      throw new PrometheusError(
        `Prometheus at ${this.where} answered a ${this.said(data && typeof data === 'object' ? (data.resultType ?? 'missing') : 'missing', 20)} result, not a ${want}`,
      );
    if (data.result.length > maxSeries)
      throw new PrometheusError(`Prometheus at ${this.where}: answer of ${data.result.length} series refused (over ${maxSeries})`);
    const warnings = [json.warnings, json.infos].flatMap((w) => (Array.isArray(w) ? w.slice(0, 10).map((x) => this.said(x, 200)) : []));
    return { result: data.result as T[], warnings };
  }
}
