// Generation with review — the SEED's route (interface.md "Generation"; service-api.md §10–11), which the live
// service does not have: POST /api/agent/v1/generations with an Idempotency-Key; an exact retry within 24 hours
// (sandbox clock) reuses the draft and the review; after that, 410. A test mode makes review setup fail after
// generation (retry_required), repaired on the identical retry. The draft's review is an ordinary review
// opportunity of the sandbox workspace, followed over the workspace MCP (rateloop_wait_for_review).
import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { canonicalJson } from '../../protocol/canonical.js';
import { ApiError } from './envelope.js';
import type { ReviewWorkspace } from './review-workspace.js';

interface Generation {
  key: string;
  bodyHash: string;
  createdAt: number;
  text: string;
  source: string;
  usage: { inputTokens: number; outputTokens: number };
  review: Obj | null;
  errorCode: string | undefined;
}

type Obj = Record<string, any>;
const WINDOW_SECONDS = 24 * 3600;

export class GenerationService {
  private readonly generations = new Map<string, Generation>();
  /** Test control: how many upcoming generations fail review setup. */
  reviewSetupFailures = 0;

  constructor(
    private readonly workspace: ReviewWorkspace,
    private readonly now: () => number,
  ) {}

  private tokenless(c: Context, e: ApiError, field?: string) {
    return c.json({ code: e.code, message: e.message, retryable: e.retryable, ...(field ? { field } : {}) }, e.status as never);
  }

  /** The review of a draft, in the seed's shape: the opportunity's lifecycle and, while open, its continuation. */
  private reviewView(g: Generation): Obj | null {
    if (!g.review) return null;
    const op = this.workspace.requireRequested(g.review.opportunityId);
    const e = this.workspace.waitEnvelope(op);
    return {
      opportunityId: e.opportunityId,
      lifecycle: { state: e.lifecycle.state, revision: e.lifecycle.revision },
      continuation: e.continuation,
    };
  }

  private response(g: Generation): Obj {
    return {
      text: g.text,
      model: 'sandbox-draft-1',
      usage: g.usage,
      ...(g.review ? { opportunityId: g.review.opportunityId } : {}),
      review: this.reviewView(g),
      reviewSetup: g.review ? { state: 'ready' } : { state: 'retry_required', ...(g.errorCode ? { errorCode: g.errorCode } : {}) },
    };
  }

  routes(): Hono {
    const app = new Hono();
    app.post('/api/agent/v1/generations', async (c) => {
      const auth = c.req.header('authorization') ?? '';
      if (auth !== `Bearer ${this.workspace.integrationKey}`)
        return this.tokenless(c, new ApiError(401, 'unauthorized', 'A workspace API key with API generation enabled is required.', null));
      let body: Obj;
      try {
        body = (await c.req.json()) as Obj;
      } catch {
        return this.tokenless(c, new ApiError(400, 'invalid_json', 'Request body must be valid JSON.', null));
      }
      const key = c.req.header('idempotency-key');
      if (!key || key !== body.clientRequestId)
        return this.tokenless(
          c,
          new ApiError(400, 'idempotency_mismatch', 'The Idempotency-Key header must equal clientRequestId.', null),
          'clientRequestId',
        );
      for (const f of ['agentId', 'clientRequestId', 'workflowKey']) {
        if (typeof body[f] !== 'string' || body[f] === '')
          return this.tokenless(c, new ApiError(400, 'invalid_request', `${f} is required.`, null), f);
      }
      if (
        !Array.isArray(body.messages) ||
        body.messages.length === 0 ||
        body.messages.some((m: Obj) => typeof m?.role !== 'string' || typeof m?.content !== 'string')
      ) {
        return this.tokenless(
          c,
          new ApiError(400, 'invalid_request', 'messages must be a non-empty array of {role, content} text messages.', null),
          'messages',
        );
      }
      if (!Number.isSafeInteger(body.maxOutputTokens) || body.maxOutputTokens < 1 || body.maxOutputTokens > 32_000) {
        return this.tokenless(
          c,
          new ApiError(400, 'invalid_request', 'maxOutputTokens must be an integer from 1 to 32000.', null),
          'maxOutputTokens',
        );
      }
      const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
      const existing = this.generations.get(key);
      if (existing) {
        if (existing.bodyHash !== bodyHash)
          return this.tokenless(
            c,
            new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was used for a different request.', null),
          );
        if (this.now() > existing.createdAt + WINDOW_SECONDS)
          return this.tokenless(
            c,
            new ApiError(410, 'generation_expired', 'The 24-hour retry window has passed: no new generation. Start a new request.', null),
          );
        // The identical retry: the same draft; review setup repaired if it had failed. No new generation.
        if (!existing.review) existing.review = this.workspace.reviewDraft(key, existing.source, existing.text);
        return c.json(this.response(existing));
      }
      const last = [...body.messages].reverse().find((m: Obj) => m.role === 'user') ?? body.messages[body.messages.length - 1];
      const words = String(last.content).split(/\s+/).filter(Boolean);
      const text = `Draft (${body.workflowKey}): ${words.slice(0, Math.min(words.length, body.maxOutputTokens)).join(' ')}`;
      const fail = this.reviewSetupFailures > 0;
      if (fail) this.reviewSetupFailures--;
      const source = String(last.content);
      const g: Generation = {
        key,
        bodyHash,
        createdAt: this.now(),
        text,
        source,
        usage: { inputTokens: words.length, outputTokens: Math.min(words.length, body.maxOutputTokens) + 2 },
        review: fail ? null : this.workspace.reviewDraft(key, source, text),
        errorCode: fail ? 'review_integration_unavailable' : undefined,
      };
      this.generations.set(key, g);
      return c.json(this.response(g));
    });
    return app;
  }
}
