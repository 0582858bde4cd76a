// HTTP to the service (node:http, with deadlines: src/service/node-http.ts). Errors come back as ServiceError carrying the service envelope
// (code, recoverWith, retryable, status). Only idempotent calls are retried, with backoff, and 429 waits for
// Retry-After; a 4xx is never retried. No answer is read past a byte cap (an endless body would fill memory).
import { timed, type Phase } from '../timings.js';
import { ServiceError, UsageError } from '../errors.js';
import { httpStatusCode, serviceCode } from '../error-codes.js';
import { serviceWord } from '../output.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readCapped } from './cap.js';
import { httpRequest } from './node-http.js';

export interface ServiceErrorDetails {
  status: number;
  code: string;
  recoverWith?: string | null;
  retryable: boolean;
  retryAfterSeconds?: number;
}

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Safe to repeat: a retry cannot create a second ask or pay twice. */
  idempotent: boolean;
  timeoutMs?: number;
  query?: Record<string, string | undefined>;
  /** Byte cap for this answer (default: the client's, else DEFAULT_MAX_RESPONSE_BYTES). */
  maxBytes?: number;
  /** How LOOPSIGN_TIMINGS counts it (default: a service call). */
  phase?: Phase;
}

export interface HttpClientOptions {
  baseUrl: string;
  retries?: number;
  /** Called before each retry (progress output). */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void;
  sleep?: (ms: number) => Promise<void>;
  /** Longest Retry-After honoured before giving up (seconds). */
  maxRetryAfterSeconds?: number;
  /** Byte cap for every answer of this client (evidence downloads set a higher one). */
  maxBytes?: number;
}

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function serviceErrorFrom(status: number, body: unknown, retryAfter: string | undefined, path: string): ServiceError {
  const env = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  // The service's words reach agents (error.code, hints): only in their documented snake_case form, never free text.
  const code = serviceCode(env.code) ?? serviceCode(env.error) ?? httpStatusCode(status);
  const message = typeof env.message === 'string' ? env.message : typeof body === 'string' && body.length < 300 ? body : `HTTP ${status}`;
  const retryable = typeof env.retryable === 'boolean' ? env.retryable : status >= 500 || status === 429;
  const recoverWith = serviceWord(env.recoverWith);
  const details: Record<string, unknown> = { status, retryable, path };
  if (recoverWith !== undefined) details.recoverWith = recoverWith;
  const ra = retryAfter === undefined ? undefined : Number(retryAfter);
  if (ra !== undefined && Number.isFinite(ra)) details.retryAfterSeconds = ra;
  return new ServiceError(code, `the service refused ${path}: ${message}`, {
    hint: hintFor(code, recoverWith),
    details,
  });
}

function hintFor(code: string, recoverWith: string | undefined): string | undefined {
  switch (code) {
    case 'duplicate_ask':
      return 'this clientRequestId was used for a different question: reuse the original file, or choose a new clientRequestId';
    case 'rate_limit_exceeded':
      return 'wait and run the same command again; it is safe to repeat';
    case 'max_payment_exceeded':
      return 'raise maxPaymentAmount in the ask file, or quote again';
    default:
      return recoverWith ? `the service suggests: ${recoverWith}` : undefined;
  }
}

function networkReason(error: unknown): string | undefined {
  const e = error as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (
    code &&
    [
      'ECONNRESET',
      'ECONNREFUSED',
      'EPIPE',
      'ETIMEDOUT',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_HEADERS_TIMEOUT',
      'UND_ERR_BODY_TIMEOUT',
    ].includes(code)
  )
    return code;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'timeout';
  return undefined;
}

export class HttpClient {
  private readonly retries: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: HttpClientOptions) {
    this.retries = options.retries ?? 4;
    this.sleep = options.sleep ?? sleepReal;
  }

  url(path: string, query?: Record<string, string | undefined>): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    return url.toString();
  }

  async request<T = Record<string, unknown>>(opts: RequestOptions): Promise<T> {
    return timed(opts.phase ?? 'service', () => this.requestUntimed<T>(opts));
  }

  private async requestUntimed<T>(opts: RequestOptions): Promise<T> {
    const url = this.url(opts.path, opts.query);
    let attempt = 0;
    for (;;) {
      attempt++;
      let failure: ServiceError;
      let waitMs: number;
      try {
        const res = await httpRequest(url, {
          method: opts.method,
          headers: {
            accept: 'application/json',
            ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...opts.headers,
          },
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          headersTimeoutMs: opts.timeoutMs ?? 30_000,
          bodyTimeoutMs: opts.timeoutMs ?? 30_000,
          // A request that is not retried never rides a kept-alive connection the server may be closing.
          freshConnection: !opts.idempotent,
        });
        const maxBytes = opts.maxBytes ?? this.options.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
        const text = (await readCapped(res.body, maxBytes, `the service's answer to ${opts.path}`, res.header('content-length'))).toString(
          'utf8',
        );
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: kept as text for the error message
        }
        if (res.status >= 200 && res.status < 300) {
          // Every JSON route answers a JSON object (service-api.md; only MCP's OPTIONS is a 204). An empty success
          // is no answer: read as {}, it would pass wherever the caller's checks allow every field to be absent.
          if (text.length === 0) {
            throw new ServiceError('invalid_response', `the service answered ${opts.path} with an empty body (HTTP ${res.status})`, {
              details: { status: res.status },
            });
          }
          if (typeof parsed !== 'object' || parsed === null) {
            throw new ServiceError('invalid_response', `the service answered ${opts.path} with something that is not a JSON object`, {
              details: { status: res.status },
            });
          }
          return parsed as T;
        }
        failure = serviceErrorFrom(res.status, parsed, res.header('retry-after'), opts.path);
        const d = failure.details as unknown as ServiceErrorDetails;
        if (!opts.idempotent || !d.retryable || attempt > this.retries) throw failure;
        const ra = d.retryAfterSeconds;
        if (ra !== undefined && ra > (this.options.maxRetryAfterSeconds ?? 120)) throw failure;
        waitMs = ra !== undefined ? ra * 1000 : backoff(attempt);
      } catch (error) {
        if (error instanceof ServiceError || error instanceof UsageError) throw error;
        const reason = networkReason(error);
        const wrapped = new ServiceError(
          'service_unreachable',
          `cannot reach the service at ${url}: ${reason ?? (error as Error).message}`,
          {
            hint: 'check --base-url and your connection; the command is safe to run again',
            details: { retryable: true, path: opts.path },
            cause: error,
          },
        );
        if (!opts.idempotent || attempt > this.retries || reason === undefined) throw wrapped;
        failure = wrapped;
        waitMs = backoff(attempt);
      }
      this.options.onRetry?.({ attempt, waitMs, reason: `${failure.code}: ${failure.message}` });
      await this.sleep(waitMs);
    }
  }
}

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s, 4 s … capped at 15 s. */
export function backoff(attempt: number): number {
  const base = Math.min(15_000, 500 * 2 ** (attempt - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}
