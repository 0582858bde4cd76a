// The paid-feedback JSON routes (service-api.md §5), typed loosely: the guards, not these types, decide what
// is trusted. Every call here is idempotent on the service side (asks by clientRequestId + payload, confirms by
// operation), so transient failures are retried.
import type { ResolvedConfig } from '../config.js';
import type { ResolvedChain } from '../chains/index.js';
import { UsageError } from '../errors.js';
import type { Output } from '../output.js';
import { HttpClient } from './http.js';

export type Json = Record<string, any>;

const enc = (s: string) => encodeURIComponent(s).replace(/\./g, '%2E');

export class ServiceClient {
  constructor(readonly http: HttpClient) {}

  templates(): Promise<Json> {
    return this.http.request({ method: 'GET', path: '/api/agent/templates', idempotent: true });
  }
  quote(body: Json): Promise<Json> {
    return this.http.request({ method: 'POST', path: '/api/agent/quote', body, idempotent: true, timeoutMs: 30_000 });
  }
  ask(body: Json): Promise<Json> {
    return this.http.request({ method: 'POST', path: '/api/agent/asks', body, idempotent: true, timeoutMs: 30_000 });
  }
  confirm(operationKey: string, transactionHashes: string[]): Promise<Json> {
    return this.http.request({ method: 'POST', path: `/api/agent/asks/${enc(operationKey)}/confirm`, body: { transactionHashes }, idempotent: true, timeoutMs: 210_000 });
  }
  confirmBonus(operationKey: string, transactionHashes: string[]): Promise<Json> {
    return this.http.request({ method: 'POST', path: `/api/agent/asks/${enc(operationKey)}/confirm-feedback-bonus`, body: { transactionHashes }, idempotent: true, timeoutMs: 210_000 });
  }
  status(operationKey: string): Promise<Json> {
    return this.http.request({ method: 'GET', path: `/api/agent/asks/${enc(operationKey)}`, idempotent: true });
  }
  statusByClient(chainId: number, clientRequestId: string, walletAddress: string): Promise<Json> {
    return this.http.request({ method: 'GET', path: '/api/agent/asks/by-client-request', query: { chainId: String(chainId), clientRequestId, walletAddress }, idempotent: true });
  }
  result(operationKey: string, contentId?: string): Promise<Json> {
    return this.http.request({ method: 'GET', path: `/api/agent/results/${enc(operationKey)}`, query: { contentId }, idempotent: true });
  }
  resultByClient(chainId: number, clientRequestId: string, walletAddress: string, contentId?: string): Promise<Json> {
    return this.http.request({ method: 'GET', path: '/api/agent/results/by-client-request', query: { chainId: String(chainId), clientRequestId, walletAddress, contentId }, idempotent: true });
  }
  resultByContent(contentId: string): Promise<Json> {
    return this.http.request({ method: 'GET', path: `/api/agent/results/by-content/${enc(contentId)}`, idempotent: true });
  }
}

export const DEFAULT_BASE_URL = 'https://www.rateloop.ai';

/**
 * A client for the configured service. Commands that can spend money require an explicit base URL
 * (service-api.md §1.1); read-only ones fall back to the public service.
 */
export function serviceClient(config: ResolvedConfig, chain: ResolvedChain, out: Output, spends: boolean): ServiceClient {
  let baseUrl = chain.baseUrl.value;
  if (baseUrl === undefined) {
    if (spends) {
      throw new UsageError('base_url_required', 'commands that can spend money need an explicit service base URL', {
        hint: 'pass --base-url https://www.rateloop.ai (or set LOOPSIGN_BASE_URL / baseUrl in the config file); on the sandbox chain the manifest supplies it',
      });
    }
    baseUrl = DEFAULT_BASE_URL;
  }
  void config;
  return new ServiceClient(
    new HttpClient({
      baseUrl,
      onRetry: ({ attempt, waitMs, reason }) => out.progress('service.retry', `retrying in ${(waitMs / 1000).toFixed(1)} s (attempt ${attempt + 1}): ${reason}`, { attempt, waitMs }),
    }),
  );
}
