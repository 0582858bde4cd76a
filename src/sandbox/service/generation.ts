// Generation with review (interface.md "Generation"; service-api.md §10–11): POST /api/agent/v1/generations with an
// Idempotency-Key; an exact retry within 24 hours (sandbox clock) reuses the draft and the review; after that, 410.
// A test mode makes review setup fail after generation (retry_required), repaired on the identical retry. Reviews
// progress with sandbox time and are followed with GET /api/agent/v1/asks/{opportunityId}/wait and a cursor.
import { createHash, randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { canonicalJson } from '../../protocol/canonical.js';
import { ApiError } from './envelope.js';

interface Review {
  opportunityId: string;
  createdAt: number;
  revision: number;
  outcome: 'approved' | 'inconclusive' | 'failed_terminal';
}

interface Generation {
  key: string;
  bodyHash: string;
  createdAt: number;
  text: string;
  usage: { inputTokens: number; outputTokens: number };
  review: Review | null;
  errorCode: string | undefined;
}

type Obj = Record<string, any>;
export const REVIEW_SECONDS = 120;
const WINDOW_SECONDS = 24 * 3600;

export class GenerationService {
  private readonly generations = new Map<string, Generation>();
  private readonly reviews = new Map<string, Review>();
  /** Test control: how many upcoming generations fail review setup, and how reviews end. */
  reviewSetupFailures = 0;
  reviewOutcome: Review['outcome'] = 'approved';

  constructor(
    private readonly apiKey: string,
    private readonly now: () => number,
  ) {}

  private tokenless(c: Context, e: ApiError, field?: string) {
    return c.json({ code: e.code, message: e.message, retryable: e.retryable, ...(field ? { field } : {}) }, e.status as never);
  }

  private newReview(): Review {
    const r: Review = { opportunityId: `opp_${randomBytes(12).toString('hex')}`, createdAt: this.now(), revision: 1, outcome: this.reviewOutcome };
    this.reviews.set(r.opportunityId, r);
    return r;
  }

  private reviewView(r: Review): Obj {
    const done = this.now() >= r.createdAt + REVIEW_SECONDS;
    const state = done ? (r.outcome === 'approved' ? 'completed' : r.outcome) : this.now() >= r.createdAt + REVIEW_SECONDS / 2 ? 'in_review' : 'pending';
    r.revision = state === 'pending' ? 1 : state === 'in_review' ? 2 : 3;
    return {
      opportunityId: r.opportunityId,
      lifecycle: { state, revision: r.revision },
      outcome: done ? (r.outcome === 'approved' ? 'approved' : 'not_approved') : null,
      continuation: done ? null : { cursor: `rev_${r.revision}` },
    };
  }

  private response(g: Generation): Obj {
    return {
      text: g.text,
      model: 'sandbox-draft-1',
      usage: g.usage,
      ...(g.review ? { opportunityId: g.review.opportunityId } : {}),
      review: g.review ? this.reviewView(g.review) : null,
      reviewSetup: g.review ? { state: 'ready' } : { state: 'retry_required', ...(g.errorCode ? { errorCode: g.errorCode } : {}) },
    };
  }

  routes(): Hono {
    const app = new Hono();
    app.use('/api/agent/v1/*', async (c, next) => {
      const auth = c.req.header('authorization') ?? '';
      if (auth !== `Bearer ${this.apiKey}`) return this.tokenless(c, new ApiError(401, 'unauthorized', 'A workspace API key with API generation enabled is required.', null));
      await next();
    });
    app.post('/api/agent/v1/generations', async (c) => {
      let body: Obj;
      try {
        body = (await c.req.json()) as Obj;
      } catch {
        return this.tokenless(c, new ApiError(400, 'invalid_json', 'Request body must be valid JSON.', null));
      }
      const key = c.req.header('idempotency-key');
      if (!key || key !== body.clientRequestId) return this.tokenless(c, new ApiError(400, 'idempotency_mismatch', 'The Idempotency-Key header must equal clientRequestId.', null), 'clientRequestId');
      for (const f of ['agentId', 'clientRequestId', 'workflowKey']) {
        if (typeof body[f] !== 'string' || body[f] === '') return this.tokenless(c, new ApiError(400, 'invalid_request', `${f} is required.`, null), f);
      }
      if (!Array.isArray(body.messages) || body.messages.length === 0 || body.messages.some((m: Obj) => typeof m?.role !== 'string' || typeof m?.content !== 'string')) {
        return this.tokenless(c, new ApiError(400, 'invalid_request', 'messages must be a non-empty array of {role, content} text messages.', null), 'messages');
      }
      if (!Number.isSafeInteger(body.maxOutputTokens) || body.maxOutputTokens < 1 || body.maxOutputTokens > 32_000) {
        return this.tokenless(c, new ApiError(400, 'invalid_request', 'maxOutputTokens must be an integer from 1 to 32000.', null), 'maxOutputTokens');
      }
      const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
      const existing = this.generations.get(key);
      if (existing) {
        if (existing.bodyHash !== bodyHash) return this.tokenless(c, new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was used for a different request.', null));
        if (this.now() > existing.createdAt + WINDOW_SECONDS) return this.tokenless(c, new ApiError(410, 'generation_expired', 'The 24-hour retry window has passed: no new generation. Start a new request.', null));
        // The identical retry: the same draft; review setup repaired if it had failed. No new generation.
        if (!existing.review) existing.review = this.newReview();
        return c.json(this.response(existing));
      }
      const last = [...body.messages].reverse().find((m: Obj) => m.role === 'user') ?? body.messages[body.messages.length - 1];
      const words = String(last.content).split(/\s+/).filter(Boolean);
      const text = `Draft (${body.workflowKey}): ${words.slice(0, Math.min(words.length, body.maxOutputTokens)).join(' ')}`;
      const fail = this.reviewSetupFailures > 0;
      if (fail) this.reviewSetupFailures--;
      const g: Generation = {
        key,
        bodyHash,
        createdAt: this.now(),
        text,
        usage: { inputTokens: words.length, outputTokens: Math.min(words.length, body.maxOutputTokens) + 2 },
        review: fail ? null : this.newReview(),
        errorCode: fail ? 'review_integration_unavailable' : undefined,
      };
      this.generations.set(key, g);
      return c.json(this.response(g));
    });
    app.get('/api/agent/v1/asks/:id/wait', async (c) => {
      const r = this.reviews.get(c.req.param('id'));
      if (!r) return this.tokenless(c, new ApiError(404, 'not_found', 'Review opportunity not found.', null));
      const timeoutMs = Number(c.req.query('timeoutMs') ?? '1000');
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1000 || timeoutMs > 60_000) return this.tokenless(c, new ApiError(400, 'invalid_wait_timeout', 'timeoutMs must be 1000 … 60000.', null));
      // Long poll: answer when the state moved past the caller's cursor, or at the timeout.
      const cursor = c.req.query('cursor');
      const deadline = Date.now() + timeoutMs;
      let view = this.reviewView(r);
      while (cursor && view.continuation?.cursor === cursor && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 200));
        view = this.reviewView(r);
      }
      return c.json(view);
    });
    return app;
  }
}
