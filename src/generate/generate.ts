// Generation with review — SEED-ONLY (interface.md; service-api.md §10): POST /api/agent/v1/generations with
// Idempotency-Key. The live service's source has no generation route (review.md §0 #1); the sandbox serves the
// seed's. A draft is never approval. The exact request is journaled so that, when review setup failed
// (retry_required), the identical request can be repeated after the condition is repaired (`generate --retry ID`).
// The draft's review is an ordinary review opportunity, followed with `loopsign review wait` over the workspace MCP.
import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { NotReadyError, ServiceError, UsageError } from '../errors.js';
import { Operation, operationId, readOperation } from '../store/operation.js';
import { readCredential, type CredentialSource } from '../review/credential.js';
import { isId } from '../review/ids.js';
import { sha256Text } from '../review/records.js';
import { reviewRecords } from '../review/session.js';
import { serviceWord } from '../output.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import type { GenerationRequest } from '../store/records.js';

export interface GenerateOptions {
  workflow?: string;
  agent?: string;
  messages?: string[];
  maxOutputTokens?: string;
  clientRequestId?: string;
  retry?: string;
  credential: CredentialSource;
}

const CLIENT_ID = /^[A-Za-z0-9._:-]{4,160}$/;
/** The service's opportunity id, used only in its exact form (aop_ + 40 hex): it is printed in `next: loopsign review wait …`. */
export function checkedOpportunityId(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (!isId('opportunity', value))
    throw new ServiceError('malformed_response', 'the service returned an opportunityId that is not aop_ + 40 hex');
  return value;
}

export function buildRequest(o: GenerateOptions): GenerationRequest {
  if (!o.workflow) throw new UsageError('usage', '--workflow is required');
  if (!o.agent) throw new UsageError('usage', '--agent is required');
  const messages = (o.messages ?? []).map((m) => {
    const i = m.indexOf(':');
    if (i <= 0)
      throw new UsageError('invalid_message', `--message "${m.slice(0, 40)}" must be ROLE:TEXT, e.g. user:Summarise the release notes`);
    return { role: m.slice(0, i), content: m.slice(i + 1) };
  });
  if (messages.length === 0) throw new UsageError('usage', 'give at least one --message ROLE:TEXT');
  const max = Number(o.maxOutputTokens);
  if (!Number.isSafeInteger(max) || max < 1)
    throw new UsageError('invalid_max_output_tokens', '--max-output-tokens must be a positive integer');
  const clientRequestId = o.clientRequestId ?? `gen-${randomBytes(8).toString('hex')}`;
  if (!CLIENT_ID.test(clientRequestId))
    throw new UsageError('invalid_client_request_id', '--client-request-id must be 4-160 letters, digits, dot, dash, colon or underscore');
  return { agentId: o.agent, clientRequestId, workflowKey: o.workflow, messages, maxOutputTokens: max };
}

/**
 * What `generate` reports: the draft (never approval), the review it opened and the next step. `service` is the
 * service's whole answer, passed through unread; `model`, `usage` and `reviewSetup` are its words too.
 */
export type GenerateOutcome = {
  clientRequestId: string;
  draft: { text: string; model: unknown; usage: unknown; approved: false };
  opportunityId: string | null;
  reviewState: string | null;
  reviewSetup: unknown;
  next: string[];
  service: ServiceDoc;
};

export async function generate(ctx: Context, o: GenerateOptions): Promise<GenerateOutcome> {
  let request: GenerationRequest;
  if (o.retry !== undefined) {
    const saved = readOperation(await ctx.store(), 'generation', operationId('generation', [o.retry]))?.data;
    if (!saved?.request)
      throw new UsageError('unknown_generation', `no journaled generation request ${o.retry}`, {
        hint: 'only requests made from this machine can be repeated with --retry',
      });
    request = saved.request; // the identical request: never changed on a retry
  } else {
    request = buildRequest(o);
  }
  const { credentialSource } = await import('../review/session.js');
  const credential = await readCredential(await credentialSource(ctx, o.credential), ctx.env);
  const env = { service: await ctx.service() };
  const journal = await Operation.open(await ctx.store(), 'generation', operationId('generation', [request.clientRequestId]), {
    chainId: 0,
    wallet: '',
    data: { request },
  });
  try {
    let res: ServiceDoc;
    try {
      res = await env.service.http.request<ServiceDoc>({
        method: 'POST',
        path: '/api/agent/v1/generations',
        body: request,
        headers: { authorization: credential.authorization, 'idempotency-key': request.clientRequestId },
        idempotent: true,
        timeoutMs: 120_000,
      });
    } catch (error) {
      if (error instanceof ServiceError && (error.details as { status?: number })?.status === 410) {
        throw new ServiceError(
          'generation_expired',
          'the 24-hour window for this request has passed: no new generation was made; start a new request',
          {
            hint: 'run `loopsign generate …` again with a new --client-request-id (or none)',
            details: { status: 410, clientRequestId: request.clientRequestId },
          },
        );
      }
      throw error;
    }
    // The opportunity goes into `next` and a journal path: only in its exact form.
    const opportunityId = checkedOpportunityId(res.opportunityId);
    await journal.setStep('answered', { response: { opportunityId, reviewSetup: res.reviewSetup ?? null } });
    const text = typeof res.text === 'string' ? res.text : '';
    if (opportunityId) await (await reviewRecords(ctx)).saveOpportunity({ opportunityId, outputCommitment: sha256Text(text) });
    const setup = objectField(res, 'reviewSetup');
    const state = objectField(objectField(res, 'review'), 'lifecycle')?.state;
    const reviewState = typeof state === 'string' ? state : null;
    const out: GenerateOutcome = {
      clientRequestId: request.clientRequestId,
      draft: { text, model: res.model, usage: res.usage, approved: false },
      opportunityId,
      reviewState,
      reviewSetup: res.reviewSetup ?? null,
      next: opportunityId ? [`loopsign review wait ${opportunityId}`] : [],
      service: res,
    };
    if (setup?.state === 'retry_required' || res.review === null || !opportunityId) {
      // The condition is printed in a hint: only a service word.
      const condition = serviceWord(setup?.errorCode) ?? 'review_setup_required';
      throw new NotReadyError(
        'review_setup_required',
        `the draft was generated but its review could not be set up (${condition}); it is not approved`,
        {
          hint: `repair "${condition}", then repeat the identical request: loopsign generate --retry ${request.clientRequestId} (no new generation happens)`,
          details: { ...out, condition },
        },
      );
    }
    return out;
  } finally {
    await journal.close();
  }
}
