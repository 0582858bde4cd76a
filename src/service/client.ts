// The paid-feedback JSON routes (service-api.md §5). Answers are ServiceDoc (src/service/doc.ts): every field unknown,
// so the guards, not these types, decide what is trusted. Every call here is idempotent on the service side (asks by clientRequestId + payload, confirms by
// operation), so transient failures are retried.
import type { ResolvedConfig } from '../config.js';
import type { ResolvedChain } from '../chains/index.js';
import { assertSandboxRunning } from '../chains/sandbox-guard.js';
import { ServiceError, UsageError } from '../errors.js';
import type { Output } from '../output.js';
import { HttpClient } from './http.js';
import type { ServiceDoc } from './doc.js';
import { DEFAULT_PROFILE, getProfile } from '../protocol/profiles/index.js';
import type { KnownFailure, ServiceProfile, ServiceRoutes } from '../protocol/profiles/types.js';

export class ServiceClient {
  readonly routes: ServiceRoutes;

  constructor(
    readonly http: HttpClient,
    /** The active service profile (src/protocol/profiles): its routes and the failures it is known for. */
    readonly profile: ServiceProfile = DEFAULT_PROFILE,
  ) {
    this.routes = profile.routes;
  }

  templates(): Promise<ServiceDoc> {
    return this.http.request({ method: 'GET', path: this.routes.templates, idempotent: true });
  }
  quote(body: ServiceDoc): Promise<ServiceDoc> {
    return this.http.request({ method: 'POST', path: this.routes.quote, body, idempotent: true, timeoutMs: 30_000 });
  }
  ask(body: ServiceDoc): Promise<ServiceDoc> {
    return this.http
      .request<ServiceDoc>({ method: 'POST', path: this.routes.asks, body, idempotent: true, timeoutMs: 30_000 })
      .catch((error: unknown) => {
        throw explainKnownFailure(this.profile, 'asks', body, error);
      });
  }
  confirm(operationKey: string, transactionHashes: string[]): Promise<ServiceDoc> {
    return this.http.request({
      method: 'POST',
      path: this.routes.confirm(operationKey),
      body: { transactionHashes },
      idempotent: true,
      timeoutMs: 210_000,
      phase: 'confirmation',
    });
  }
  confirmBonus(operationKey: string, transactionHashes: string[]): Promise<ServiceDoc> {
    return this.http.request({
      method: 'POST',
      path: this.routes.confirmBonus(operationKey),
      body: { transactionHashes },
      idempotent: true,
      timeoutMs: 210_000,
      phase: 'confirmation',
    });
  }
  status(operationKey: string): Promise<ServiceDoc> {
    return this.http.request({ method: 'GET', path: this.routes.ask(operationKey), idempotent: true });
  }
  statusByClient(chainId: number, clientRequestId: string, walletAddress: string): Promise<ServiceDoc> {
    return this.http.request({
      method: 'GET',
      path: this.routes.askByClient,
      query: { chainId: String(chainId), clientRequestId, walletAddress },
      idempotent: true,
    });
  }
  result(operationKey: string, contentId?: string): Promise<ServiceDoc> {
    return this.http.request({ method: 'GET', path: this.routes.result(operationKey), query: { contentId }, idempotent: true });
  }
  resultByClient(chainId: number, clientRequestId: string, walletAddress: string, contentId?: string): Promise<ServiceDoc> {
    return this.http.request({
      method: 'GET',
      path: this.routes.resultByClient,
      query: { chainId: String(chainId), clientRequestId, walletAddress, contentId },
      idempotent: true,
    });
  }
  resultByContent(contentId: string): Promise<ServiceDoc> {
    return this.http.request({ method: 'GET', path: this.routes.resultByContent(contentId), idempotent: true });
  }
}

/** A failure the profile knows for this request, said plainly (still a service error, exit 3); else as it came. */
export function explainKnownFailure(profile: ServiceProfile, route: KnownFailure['route'], body: ServiceDoc, error: unknown): unknown {
  if (!(error instanceof ServiceError)) return error;
  const status = error.details?.status;
  const known = profile.knownFailures.find((f) => f.route === route && f.status === status && f.code === error.code && f.applies(body));
  if (!known) return error;
  return new ServiceError(
    error.code,
    `the service failed (HTTP ${status} ${error.code}: ${error.message.replace(/^the service refused [^:]+: /, '')}): ${known.explain} (profile ${profile.id}); it returned no plan, so nothing was signed or paid`,
    {
      hint: known.hint,
      details: error.details,
    },
  );
}

export const DEFAULT_BASE_URL = 'https://www.rateloop.ai';

/**
 * A client for the configured service. Commands that can spend money require an explicit base URL
 * (service-api.md §1.1); read-only ones fall back to the public service.
 */
export function serviceClient(config: ResolvedConfig, chain: ResolvedChain, out: Output, spends: boolean): ServiceClient {
  assertSandboxRunning(chain.chain);
  let baseUrl = chain.baseUrl.value;
  if (baseUrl === undefined) {
    if (spends) {
      throw new UsageError('base_url_required', 'commands that can spend money need an explicit service base URL', {
        hint: 'pass --base-url https://www.rateloop.ai (or set LOOPSIGN_BASE_URL / baseUrl in the config file); on the sandbox chain the manifest supplies it',
      });
    }
    baseUrl = DEFAULT_BASE_URL;
  }
  return new ServiceClient(
    new HttpClient({
      baseUrl,
      onRetry: ({ attempt, waitMs, reason }) =>
        out.progress('service.retry', `retrying in ${(waitMs / 1000).toFixed(1)} s (attempt ${attempt + 1}): ${reason}`, {
          attempt,
          waitMs,
        }),
    }),
    getProfile(config.profile.value),
  );
}
