// loopsign review create | policy | evaluate | request | wait | result | list | state
import type { Context } from '../context.js';
import { serviceDocument } from '../output.js';
import { timeoutOf } from './timeout.js';
import type { CredentialOptions } from './define.js';
import type {
  GateOptions,
  ReviewCreateOptions,
  ReviewEvaluateOptions,
  ReviewListOptions,
  ReviewRequestOptions,
  ReviewResultOptions,
  ReviewWaitOptions,
} from './review.def.js';
import type { Followed } from '../review/follow.js';
import { withRerun } from './rerun.js';

const credential = (o: CredentialOptions) => ({ apiKeyFile: o.apiKeyFile, apiKeyEnv: o.apiKeyEnv });

async function workspace(ctx: Context, o: CredentialOptions) {
  const { openWorkspace } = await import('../review/session.js');
  return openWorkspace(ctx, credential(o));
}

async function records(ctx: Context) {
  const { reviewRecords } = await import('../review/session.js');
  return reviewRecords(ctx);
}

async function reviewCreateHandler(ctx: Context, o: ReviewCreateOptions): Promise<void> {
  const { createPrivateReview } = await import('../review/private-review.js');
  const { openAssurance, reviewBaseUrl } = await import('../review/session.js');
  // The route also takes a connected agent token, but the project must be checked against `projects list`, which
  // takes only the API key.
  const r = await createPrivateReview(await ctx.store(), await reviewBaseUrl(ctx), () => openAssurance(ctx, credential(o)), o);
  const next = [`loopsign projects show ${String(o.project)}`];
  ctx.out.result(
    serviceDocument(r.doc, {
      privateReviewId: r.privateReviewId,
      status: r.status,
      responseDeadline: r.responseDeadline,
      idempotencyKey: r.idempotencyKey,
      keyGenerated: r.keyGenerated,
      rerun: r.rerun,
      bodyBytes: r.bodyBytes,
      next,
    }),
    () =>
      `private review ${r.privateReviewId}: ${r.status}, responses due by ${r.responseDeadline}${r.rerun ? ' (the same request again: the service answered with the stored review)' : ''}\nidempotency key ${r.idempotencyKey}${r.keyGenerated ? ' (generated; reused if you run this again)' : ''}\nnext: ${next[0]}`,
  );
}

async function reviewPolicyHandler(ctx: Context, o: CredentialOptions): Promise<void> {
  const { agentContext } = await import('../review/invited.js');
  const mcp = await workspace(ctx, o);
  try {
    const c = await agentContext(mcp);
    const summary = {
      workspaceId: c.workspaceId,
      integrationId: c.integrationId,
      audiencePolicyHash: c.audiencePolicyHash,
      allowedWorkflowKeys: c.allowedWorkflowKeys,
      humanReview: c.humanReviewStatus,
      authority: c.authority,
      requestProfile: c.profile,
    };
    ctx.out.result(serviceDocument(c.doc, summary), () =>
      [
        `workspace ${c.workspaceId}, integration ${c.integrationId}`,
        `  workflows        ${c.allowedWorkflowKeys.join(', ') || '(any)'}`,
        `  human review     ${c.humanReviewStatus}${c.authority ? `, authority ${c.authority}` : ''}`,
        `  request profile  ${c.profile ? `${c.profile.id}@${c.profile.version} ${c.profile.hash} (${c.profile.audienceType}, question ${c.profile.questionAuthority})` : 'none'}`,
        `  audience policy  ${c.audiencePolicyHash}`,
      ].join('\n'),
    );
  } finally {
    await mcp.close();
  }
}

async function reviewEvaluateHandler(ctx: Context, o: ReviewEvaluateOptions): Promise<void> {
  const { evaluate, nextFor } = await import('../review/invited.js');
  const mcp = await workspace(ctx, o);
  try {
    const r = await evaluate(mcp, await records(ctx), o);
    const e = r.envelope;
    const next = nextFor(e.state, e.opportunityId);
    const scopeId = typeof e.doc.scopeId === 'string' && /^evs_[0-9a-f]{40}$/.test(e.doc.scopeId) ? e.doc.scopeId : null;
    ctx.out.result(
      serviceDocument(e.doc, {
        opportunityId: e.opportunityId,
        state: e.state,
        decision: e.decision,
        scopeId,
        repeated: r.repeated,
        next: next ? [next] : [],
      }),
      () =>
        [
          `opportunity ${e.opportunityId}: ${e.decision}, ${e.state}${r.repeated ? ' (the journaled inputs were sent again)' : ''}`,
          ...(next
            ? [`next: ${next}`]
            : e.state === 'skipped'
              ? ['skipped by the sampling policy: no human review (not a human approval)']
              : []),
        ].join('\n'),
    );
  } finally {
    await mcp.close();
  }
}

async function reviewRequestHandler(ctx: Context, o: ReviewRequestOptions, args: unknown[]): Promise<void> {
  const { requestReview, nextFor } = await import('../review/invited.js');
  const mcp = await workspace(ctx, o);
  try {
    const r = await requestReview(mcp, await records(ctx), String(args[0]), o);
    const e = r.envelope;
    const next = nextFor(e.state, e.opportunityId);
    ctx.out.result(
      serviceDocument(e.doc, {
        opportunityId: e.opportunityId,
        action: r.action,
        state: e.state,
        privateReviewId: r.privateReviewId,
        deliveryId: r.deliveryId,
        next: next ? [next] : [],
      }),
      () =>
        [
          `opportunity ${e.opportunityId}: ${r.action}, ${e.state}${r.privateReviewId ? ` (private review ${r.privateReviewId})` : ''}`,
          ...(next ? [`next: ${next}`] : []),
        ].join('\n'),
    );
  } finally {
    await mcp.close();
  }
}

async function gateTrust(o: GateOptions) {
  const { gateTrustFrom } = await import('../review/gate.js');
  return gateTrustFrom({ gateKey: o.gateKey, trustedKeys: o.trustedKeys });
}

function approvedResult(ctx: Context, f: Followed, extra: Record<string, unknown> = {}): void {
  const v = f.verdict;
  ctx.out.result(
    serviceDocument(f.envelope.doc, {
      opportunityId: v.opportunityId,
      state: v.state,
      approved: true,
      reason: v.reason,
      evidence: v.evidence,
      cursor: f.cursor,
      releaseDisposition: v.releaseDisposition,
      resultOutcome: v.resultOutcome,
      outputCommitment: v.outputCommitment,
      ...extra,
    }),
    () =>
      [
        `review ${v.opportunityId}: APPROVED (completed, authorized_positive, signature verified, output ${v.outputCommitment})`,
        ...Object.entries(extra).map(([k, val]) => `  ${k}: ${typeof val === 'object' ? JSON.stringify(val) : String(val)}`),
      ].join('\n'),
  );
}

async function reviewWaitHandler(ctx: Context, o: ReviewWaitOptions, args: unknown[]): Promise<void> {
  const { waitReview, settle } = await import('../review/follow.js');
  const timeout = timeoutOf(o.timeout, 600);
  const trust = await gateTrust(o);
  const mcp = await workspace(ctx, o);
  try {
    const { sleepUnlessAborted } = await import('../sleep.js');
    const f = await waitReview(mcp, await records(ctx), String(args[0]), timeout, ctx.out, {
      trust,
      outputFile: o.output,
      cursor: o.cursor,
      sleep: (ms) => sleepUnlessAborted(ms, ctx.signal),
    });
    settle(f);
    approvedResult(ctx, f);
  } finally {
    await mcp.close();
  }
}

async function reviewResultHandler(ctx: Context, o: ReviewResultOptions, args: unknown[]): Promise<void> {
  const { reviewResult: read, settle } = await import('../review/follow.js');
  const { UsageError } = await import('../errors.js');
  if (
    o.verify !== true &&
    (o.run !== undefined || o.sessionCookieFile !== undefined || o.sessionCookieEnv !== undefined || o.publicKey !== undefined)
  ) {
    throw new UsageError('usage', '--run, --public-key and --session-cookie-* go with --verify');
  }
  const trust = await gateTrust(o);
  const mcp = await workspace(ctx, o);
  try {
    const f = await read(mcp, await records(ctx), String(args[0]), { trust, outputFile: o.output });
    let verified: Record<string, unknown> | undefined;
    if (o.verify === true && f.envelope.terminal) verified = await verifyRun(ctx, o, f, mcp);
    settle(f);
    approvedResult(ctx, f, verified ? { run: verified } : {});
  } finally {
    await mcp.close();
  }
}

/** --verify: the evidence packet of the review's run, with the session cookie, against the pinned packet key. */
async function verifyRun(
  ctx: Context,
  o: ReviewResultOptions,
  f: Followed,
  mcp: Awaited<ReturnType<typeof workspace>>,
): Promise<Record<string, unknown>> {
  const { userId } = await import('../review/ids.js');
  const { runIdOfDelivery, verifyRunPacket } = await import('../review/run-evidence.js');
  const { UsageError } = await import('../errors.js');
  let runId = o.run !== undefined ? userId('run', o.run, '--run') : undefined;
  if (!runId) {
    let deliveryId = (await records(ctx)).readOpportunity(f.envelope.opportunityId)?.deliveryId;
    if (!deliveryId) {
      // A terminal review's wait answers at once with its delivery.
      const { parseEnvelope } = await import('../review/envelope.js');
      const doc = await mcp.tool('rateloop_wait_for_review', { opportunityId: f.envelope.opportunityId, timeoutMs: 1 }, 15_000);
      deliveryId = parseEnvelope(doc, 'rateloop_wait_for_review', f.envelope.opportunityId).wait?.deliveryId ?? undefined;
    }
    if (!deliveryId)
      throw new UsageError(
        'run_unknown',
        `review ${f.envelope.opportunityId} has no private delivery, so no run to verify (a ${f.envelope.lane} review)`,
        { hint: 'give the run with --run hau_…' },
      );
    runId = runIdOfDelivery(deliveryId);
  }
  const { openAssurance } = await import('../review/session.js');
  const client = await openAssurance(ctx, credential(o));
  const v = await verifyRunPacket(
    client,
    f.envelope.workspaceId,
    runId,
    { publicKey: o.publicKey, keyId: o.keyId, trustedKeys: o.trustedKeys },
    { file: o.sessionCookieFile, env: o.sessionCookieEnv },
    ctx.env,
  );
  return { runId: v.runId, workspaceId: v.workspaceId, packetDigest: v.packetDigest, keyId: v.keyId, valid: true };
}

async function reviewListHandler(ctx: Context, o: ReviewListOptions): Promise<void> {
  const { listOpenReviews, nextFor } = await import('../review/invited.js');
  const mcp = await workspace(ctx, o);
  try {
    const r = await listOpenReviews(mcp, o);
    const next = r.items.map((i) => nextFor(i.state, i.opportunityId)).filter((n): n is string => n !== undefined);
    ctx.out.result({ items: r.items, nextCursor: r.nextCursor, next, service: r.docs.length === 1 ? r.docs[0] : r.docs }, () =>
      [
        `${r.items.length} open review(s)${r.nextCursor ? ' (more: --cursor or --all)' : ''}`,
        ...r.items.map((i) => `  ${i.opportunityId}  ${i.state.padEnd(17)} next ${i.nextAction}`),
      ].join('\n'),
    );
  } finally {
    await mcp.close();
  }
}

async function reviewStateHandler(ctx: Context, o: CredentialOptions, args: unknown[]): Promise<void> {
  const { assuranceState } = await import('../review/invited.js');
  const mcp = await workspace(ctx, o);
  try {
    const r = await assuranceState(mcp, String(args[0]));
    ctx.out.result(
      serviceDocument(r.doc, r.state),
      () => `scope ${r.state.scopeId}: stage ${r.state.stage}, review rate ${(r.state.reviewRateBps / 100).toFixed(2)} %`,
    );
  } finally {
    await mcp.close();
  }
}

// Printed commands carry the flags that chose the credential and the service (./rerun.ts).
export const reviewCreate = withRerun(reviewCreateHandler);
export const reviewPolicy = withRerun(reviewPolicyHandler);
export const reviewEvaluate = withRerun(reviewEvaluateHandler);
export const reviewRequest = withRerun(reviewRequestHandler);
export const reviewWait = withRerun(reviewWaitHandler);
export const reviewResult = withRerun(reviewResultHandler);
export const reviewList = withRerun(reviewListHandler);
export const reviewState = withRerun(reviewStateHandler);
