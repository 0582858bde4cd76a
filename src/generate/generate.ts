// Generation with review (interface.md; service-api.md §10): POST /api/agent/v1/generations with Idempotency-Key.
// A draft is never approval. The exact request is journaled so that, when review setup failed (retry_required),
// the identical request can be repeated after the condition is repaired (`generate --retry ID`).
import { randomBytes } from 'node:crypto';
import type { Context } from '../context.js';
import { NotReadyError, ServiceError, UsageError } from '../errors.js';
import { Journal, journalId } from '../journal/journal.js';
import { askEnvironment } from '../ask/prepare.js';
import { serviceWord } from '../output.js';

type Json = Record<string, any>;

export interface GenerateOptions {
  workflow?: string;
  agent?: string;
  messages?: string[];
  maxOutputTokens?: string;
  clientRequestId?: string;
  retry?: string;
}

const CLIENT_ID = /^[A-Za-z0-9._:-]{4,160}$/;
const OPPORTUNITY_ID = /^[A-Za-z0-9._:-]{4,160}$/;

/** The service's opportunity id, used only in its exact form (it is printed in `next: loopsign review wait …`). */
export function checkedOpportunityId(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !OPPORTUNITY_ID.test(value)) throw new ServiceError('malformed_response', 'the service returned an opportunityId that is not 4-160 letters, digits, dot, dash, colon or underscore');
  return value;
}

function apiKeyHeader(): Record<string, string> {
  const key = process.env.LOOPSIGN_API_KEY;
  if (!key) throw new UsageError('api_key_required', 'generation needs a workspace API key in LOOPSIGN_API_KEY', { hint: 'the key of a connected API-key agent with API generation enabled; never on the command line' });
  return { authorization: `Bearer ${key}` };
}

export function buildRequest(o: GenerateOptions): Json {
  if (!o.workflow) throw new UsageError('usage', '--workflow is required');
  if (!o.agent) throw new UsageError('usage', '--agent is required');
  const messages = (o.messages ?? []).map((m) => {
    const i = m.indexOf(':');
    if (i <= 0) throw new UsageError('invalid_message', `--message "${m.slice(0, 40)}" must be ROLE:TEXT, e.g. user:Summarise the release notes`);
    return { role: m.slice(0, i), content: m.slice(i + 1) };
  });
  if (messages.length === 0) throw new UsageError('usage', 'give at least one --message ROLE:TEXT');
  const max = Number(o.maxOutputTokens);
  if (!Number.isSafeInteger(max) || max < 1) throw new UsageError('invalid_max_output_tokens', '--max-output-tokens must be a positive integer');
  const clientRequestId = o.clientRequestId ?? `gen-${randomBytes(8).toString('hex')}`;
  if (!CLIENT_ID.test(clientRequestId)) throw new UsageError('invalid_client_request_id', '--client-request-id must be 4-160 letters, digits, dot, dash, colon or underscore');
  return { agentId: o.agent, clientRequestId, workflowKey: o.workflow, messages, maxOutputTokens: max };
}

export async function generate(ctx: Context, o: GenerateOptions): Promise<Json> {
  let request: Json;
  if (o.retry !== undefined) {
    const saved = await Journal.read(journalId('generation', [o.retry]));
    if (!saved?.request) throw new UsageError('unknown_generation', `no journaled generation request ${o.retry}`, { hint: 'only requests made from this machine can be repeated with --retry' });
    request = saved.request as Json; // the identical request: never changed on a retry
  } else {
    request = buildRequest(o);
  }
  const headers = apiKeyHeader();
  const env = await askEnvironment(ctx, false, false);
  const journal = await Journal.open(journalId('generation', [request.clientRequestId]), { kind: 'generation', chainId: 0, wallet: '', request });
  try {
    let res: Json;
    try {
      res = await env.service.http.request<Json>({ method: 'POST', path: '/api/agent/v1/generations', body: request, headers: { ...headers, 'idempotency-key': request.clientRequestId }, idempotent: true, timeoutMs: 120_000 });
    } catch (error) {
      if (error instanceof ServiceError && (error.details as { status?: number })?.status === 410) {
        throw new ServiceError('generation_expired', 'the 24-hour window for this request has passed: no new generation was made; start a new request', {
          hint: 'run `loopsign generate …` again with a new --client-request-id (or none)',
          details: { status: 410, clientRequestId: request.clientRequestId },
        });
      }
      throw error;
    }
    const opportunityId = checkedOpportunityId(res.opportunityId);
    await journal.step('answered', { response: { opportunityId, reviewSetup: res.reviewSetup ?? null } });
    const out = { clientRequestId: request.clientRequestId, draft: { text: res.text, model: res.model, usage: res.usage, approved: false }, opportunityId, review: res.review ?? null, reviewSetup: res.reviewSetup ?? null };
    if (res.reviewSetup?.state === 'retry_required' || res.review === null) {
      const condition = serviceWord(res.reviewSetup?.errorCode) ?? 'review_setup_required';
      throw new NotReadyError('review_setup_required', `the draft was generated but its review could not be set up (${condition}); it is not approved`, {
        hint: `repair "${condition}", then repeat the identical request: loopsign generate --retry ${request.clientRequestId} (no new generation happens)`,
        details: { ...out, condition },
      });
    }
    return out;
  } finally {
    await journal.close();
  }
}

/** Follow a review with its continuation cursor. Only an approved review is success; everything else is exit 7. */
export async function reviewWait(ctx: Context, opportunityId: string, timeoutSeconds: number): Promise<Json> {
  if (!/^[A-Za-z0-9._:-]{4,160}$/.test(opportunityId)) throw new UsageError('invalid_opportunity', `${opportunityId} is not an opportunity id`);
  const headers = apiKeyHeader();
  const env = await askEnvironment(ctx, false, false);
  const deadline = Date.now() + timeoutSeconds * 1000;
  let cursor: string | undefined;
  const spinner = await ctx.out.spinner('review.wait', `waiting for review ${opportunityId}`);
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new NotReadyError('review_wait_timeout', `review ${opportunityId} did not finish within ${timeoutSeconds} s; a timeout is not approval`, {
          hint: `wait again on the same opportunity: loopsign review wait ${opportunityId} (do not create a new review)`,
          details: { opportunityId, cursor: cursor ?? null },
        });
      }
      const review = await env.service.http.request<Json>({
        method: 'GET',
        path: `/api/agent/v1/asks/${encodeURIComponent(opportunityId)}/wait`,
        query: { timeoutMs: String(Math.max(1000, Math.min(30_000, left))), cursor },
        headers,
        idempotent: true,
        timeoutMs: 40_000,
      });
      const state = String(review.lifecycle?.state ?? 'unknown');
      spinner.update(`review ${opportunityId}: ${state}`);
      if (review.continuation?.cursor) {
        cursor = String(review.continuation.cursor);
        continue;
      }
      if (state === 'completed' && review.outcome === 'approved') {
        spinner.succeed(`review ${opportunityId}: approved`);
        return { opportunityId, state, approved: true, review };
      }
      throw new NotReadyError('review_not_approved', `review ${opportunityId} ended ${state}${review.outcome ? ` (${String(review.outcome)})` : ''}: it is not approval`, {
        details: { opportunityId, state, approved: false, review },
      });
    }
  } finally {
    spinner.stop();
  }
}
