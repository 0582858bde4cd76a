// The sandbox's workspace for invited review (review.md §5–7, §9), the state machine: credentials and projects,
// review opportunities from evaluation to request, deliveries to the invited panel, and the lifecycle the workspace
// MCP tools and the assurance routes expose. The workspace as it is set up (an approved agent integration bound to
// a private-invited request profile and a cohort of three invited reviewers, the documents it hands out) is
// review-fixtures.ts. Reviewers answer as sandbox time passes (the chain's clock: test controls and --auto-advance
// move it); how a review ends is a test control. A terminal review is signed with the sandbox's evidence key (listed
// for human_review_gate) and projected into a completed run whose evidence packet the evidence routes sign. Nothing
// outside the sandbox imports this.
import { createHash, sign as cryptoSign } from 'node:crypto';
import { b64url } from '../../evidence/keys.js';
import type { RunSource } from './evidence.js';
import {
  ALL_SCOPES,
  PANEL_SIZE,
  RESPONSE_WINDOW_SECONDS,
  agentContextDoc,
  commit,
  draftEvaluationArgs,
  executionManifestDoc,
  executionProfileDoc,
  hex,
  iso,
  newApiKey,
  privateReviewDoc,
  reviewerAnswers,
  reviewerAssignments,
  sandboxProject,
  sha,
  workspaceFixture,
  type Answer,
  type ReviewOutcome,
  type Scope,
  type WorkspaceFixture,
} from './review-fixtures.js';

type Obj = Record<string, any>;

/** A refusal in the tokenless envelope (review.md §3.1); over MCP it becomes a tool error. */
export class WsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
  body(): Obj {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}

export interface Principal {
  key: string;
  kind: 'integration' | 'pairing' | 'plain';
  scopes: Set<Scope>;
  registration?: Obj;
}

interface Project {
  projectId: string;
  name: string;
  description?: string;
  dataClassification: string;
  retentionDays: number;
  createdAt: number;
  updatedAt: number;
  holders: Set<string>;
}

interface Delivery {
  deliveryId: string;
  opportunityId: string | null;
  privateReviewId: string;
  projectId: string;
  createdAt: number;
  deadline: number;
  plan: Answer[];
  runId: string;
  /** HTTP-created reviews list their run at once; an opportunity's run appears when the review is terminal. */
  runListedEarly: boolean;
  final?: {
    state: 'completed' | 'inconclusive' | 'failed_terminal';
    outcome: 'positive' | 'negative' | 'inconclusive' | 'failed';
    at: number;
    responses: Answer[];
  };
}

interface Opportunity {
  opportunityId: string;
  externalOpportunityId: string;
  argsDigest: string;
  executionId: string;
  executionDigest: string;
  workflowKey: string;
  riskTier: string;
  scopeId: string;
  raw: Obj;
  createdAt: number;
  suggestionCommitment: string;
  sourceHash: string;
  state: string;
  revision: number;
  reasonCodes: string[];
  stateEnteredAt: number;
  requested: boolean;
  question: Obj | null;
  delivery?: Delivery;
  requestRaw?: Obj;
}

export class ReviewWorkspace {
  /** Its agent, policies, binding, cohort and request profile (review-fixtures.ts). */
  readonly fixture: WorkspaceFixture = workspaceFixture();
  readonly projectId: string;
  readonly keys = new Map<string, Principal>();
  readonly projects = new Map<string, Project>();
  private readonly opportunities = new Map<string, Opportunity>();
  private readonly privateReviews = new Map<string, { requestHash: string; response: Obj }>();
  private readonly deliveries = new Map<string, Delivery>();
  /** Test controls. */
  outcome: ReviewOutcome = 'approved';
  unsignedEvidence = false;

  constructor(
    readonly workspaceId: string,
    readonly integrationKey: string,
    private readonly gateKey: { keyId: string; privateKey: import('node:crypto').KeyObject },
    readonly now: () => number,
  ) {
    this.keys.set(integrationKey, { key: integrationKey, kind: 'integration', scopes: new Set(ALL_SCOPES) });
    this.projectId = `hap_${hex(16)}`;
    this.projects.set(this.projectId, sandboxProject(this.projectId, integrationKey, now()));
  }

  /** Test control: another key (a pairing key, a plain workspace key, or one with fewer scopes). */
  mintKey(kind: Principal['kind'], scopes: Scope[] = ALL_SCOPES): string {
    const key = newApiKey();
    this.keys.set(key, { key, kind, scopes: new Set(scopes) });
    return key;
  }

  requireScope(p: Principal, scope: Scope): void {
    if (!p.scopes.has(scope)) throw new WsError(403, 'insufficient_scope', `This credential lacks ${scope}.`);
  }

  // --- agent context and assurance state -------------------------------------------------------------------------

  agentContext(p: Principal): Obj {
    return agentContextDoc(this.fixture, this.workspaceId, p.scopes);
  }

  private scopeOf(workflowKey: string, profileHash: string): string {
    return `evs_${sha(`${this.workspaceId}\0${this.fixture.agentVersionId}\0${workflowKey}\0${profileHash}`).slice(0, 40)}`;
  }

  private stateFields(scopeId: string, profile: Obj | null): Obj {
    const mine = [...this.opportunities.values()].filter((o) => o.scopeId === scopeId);
    return {
      schemaVersion: 'rateloop.assurance-state.v1',
      workspaceId: this.workspaceId,
      agentId: this.fixture.agentId,
      agentVersionId: this.fixture.agentVersionId,
      scopeId,
      policyId: this.fixture.policyId,
      policyVersion: 1,
      stage: 'calibrating',
      reviewRateBps: 10000,
      completedComparableCases: mine.filter((o) => o.state === 'completed').length,
      stableCasesSinceStage: mine.filter((o) => o.state === 'completed').length,
      reviewedOpportunityCount: mine.length,
      skippedOpportunityCount: 0,
      humanAgreementBps: null,
      humanAgreementLower95Bps: null,
      nextReassessmentAfter: 30,
      executionProfileHash: profile ? commit(profile) : null,
      executionProfile: profile,
    };
  }

  assuranceState(scopeId: string): Obj {
    const any = [...this.opportunities.values()].find((o) => o.scopeId === scopeId);
    if (!any) throw new WsError(404, 'assurance_state_not_found', 'Assurance state not found.');
    return this.stateFields(scopeId, any.raw.executionProfile);
  }

  // --- evaluate ---------------------------------------------------------------------------------------------------

  opportunityIdOf(externalOpportunityId: string): string {
    return `aop_${sha(`${this.workspaceId}\0${this.fixture.agentId}\0${externalOpportunityId}`).slice(0, 40)}`;
  }

  /** Arguments already checked for their keys (MCP) or coming from the sandbox itself (generation). */
  evaluate(args: Obj): Obj {
    if (args.audiencePolicyHash !== this.fixture.audiencePolicyHash)
      throw new WsError(409, 'review_policy_mismatch', 'The opportunity audience does not match the frozen review policy.');
    if (args.workflowKey !== this.fixture.workflowKey)
      throw new WsError(403, 'workflow_not_allowed', 'This workflow is not allowed for the integration.');
    const exec = args.execution as Obj;
    const spans = Array.isArray(exec?.generationSpans) ? (exec.generationSpans as Obj[]) : [];
    if (
      spans.length < 1 ||
      spans.length > 64 ||
      spans.filter((s) => s.role === 'primary' && s.spanId === exec.primarySpanId).length !== 1
    ) {
      throw new WsError(400, 'invalid_execution_provenance', 'Exactly one primary generation span must match primarySpanId.');
    }
    const opportunityId = this.opportunityIdOf(args.externalOpportunityId);
    const argsDigest = commit(args);
    const executionId = `aex_${sha(`${this.workspaceId}\0${this.fixture.agentId}\0${exec.externalExecutionId}`).slice(0, 40)}`;
    const executionDigest = commit(exec);
    const existing = this.opportunities.get(opportunityId);
    if (existing) {
      if (existing.argsDigest !== argsDigest)
        throw new WsError(409, 'review_opportunity_conflict', 'externalOpportunityId is already bound to different immutable inputs.');
      return this.envelope(existing, existing.raw);
    }
    const other = [...this.opportunities.values()].find((o) => o.executionId === executionId);
    if (other && other.executionDigest !== executionDigest)
      throw new WsError(409, 'execution_provenance_conflict', 'externalExecutionId is already bound to different provenance.');
    const t = this.now();
    const profile = executionProfileDoc(exec);
    const scopeId = this.scopeOf(args.workflowKey, commit(profile));
    const metadataCommitment = commit({
      opportunityId,
      workflowKey: args.workflowKey,
      riskTier: args.riskTier,
      declaredConfidenceBps: args.declaredConfidenceBps ?? null,
      criticalRisk: args.criticalRisk ?? false,
      metadataComplete: args.metadataComplete,
    });
    const manifest = executionManifestDoc(exec, spans);
    const manifestCommitment = commit(manifest);
    const op: Opportunity = {
      opportunityId,
      externalOpportunityId: args.externalOpportunityId,
      argsDigest,
      executionId,
      executionDigest,
      workflowKey: args.workflowKey,
      riskTier: args.riskTier,
      scopeId,
      raw: {},
      createdAt: t,
      suggestionCommitment: args.suggestionCommitment,
      sourceHash: args.sourceEvidence.hash,
      state: 'request_ready',
      revision: 2,
      reasonCodes: ['always_review', 'private_invited_unpaid_lane_ready'],
      stateEnteredAt: t,
      requested: false,
      question: null,
    };
    this.opportunities.set(opportunityId, op);
    op.raw = {
      ...this.stateFields(scopeId, profile),
      schemaVersion: 'rateloop.review-decision.v1',
      opportunityId,
      externalOpportunityId: args.externalOpportunityId,
      decision: 'required',
      required: true,
      reasonCodes: ['always_review'],
      selectionProbabilityBps: 10000,
      sampleBucket: parseInt(sha(opportunityId).slice(0, 8), 16) % 10000,
      policyFrozen: true,
      suggestionCommitment: args.suggestionCommitment,
      metadataCommitment,
      sourceEvidenceHash: args.sourceEvidence.hash,
      executionId,
      executionManifestCommitment: manifestCommitment,
      executionEvidence: {
        schemaVersion: 'rateloop.execution-evidence.v1',
        executionId,
        opportunityBinding: { opportunityId, metadataCommitment },
        source: { kind: 'host_reported', independentlyVerified: false, attestation: null },
        manifest,
        manifestCommitment,
        executionProfile: profile,
        executionProfileHash: commit(profile),
        evidenceCommitment: commit({ executionId, manifestCommitment }),
      },
      createdAt: iso(t),
      lifecycle: { state: op.state, revision: op.revision, terminal: false, reasonCodes: op.reasonCodes, stateEnteredAt: iso(t) },
    };
    return this.envelope(op, op.raw);
  }

  private get(opportunityId: string): Opportunity {
    const op = this.opportunities.get(opportunityId);
    if (!op) throw new WsError(404, 'review_opportunity_not_found', 'Review opportunity not found.');
    return op;
  }

  // --- request ----------------------------------------------------------------------------------------------------

  request(args: Obj, sourcePayload: string, suggestionPayload: string): Obj {
    const op = this.get(args.opportunityId);
    this.settle(op);
    if (!['approval_required', 'request_ready', 'pending', 'blocked'].includes(op.state))
      throw new WsError(409, 'review_routing_binding_mismatch', 'The opportunity no longer matches an open review route.');
    if (commit(sourcePayload) !== op.sourceHash)
      throw new WsError(409, 'source_payload_commitment_mismatch', 'sourcePayload does not match the committed source evidence.');
    if (commit(suggestionPayload) !== op.suggestionCommitment)
      throw new WsError(409, 'suggestion_payload_commitment_mismatch', 'suggestionPayload does not match the committed suggestion.');
    if (args.question !== undefined)
      throw new WsError(400, 'review_question_override_not_allowed', 'The bound request profile does not allow question overrides.');
    const material = args.material as Obj | undefined;
    if (!material) throw new WsError(400, 'invalid_tool_arguments', 'Review material is required for automatic routing.');
    if (material.kind !== 'private')
      throw new WsError(409, 'review_material_lane_mismatch', 'Review material does not match the private invited lane.');
    if (
      this.fixture.profile.criterion.length + 163 + JSON.stringify(sourcePayload).length + JSON.stringify(suggestionPayload).length >
      4000
    )
      throw new WsError(413, 'review_payload_too_large', 'The reviewer prompt exceeds 4000 characters.');
    const replayed = op.requested;
    if (!op.requested) {
      const t = this.now();
      const foundation = this.newPrivateReview(
        this.projectId,
        [material.sourceContentType, material.suggestionContentType],
        [op.sourceHash, op.suggestionCommitment],
        t,
      );
      op.delivery = this.newDelivery(op.opportunityId, foundation.privateReviewId, this.projectId, t, false);
      op.requested = true;
      op.state = 'pending';
      op.revision += 1;
      op.reasonCodes = ['private_review_pending'];
      op.stateEnteredAt = t;
      op.requestRaw = { foundation };
    }
    const d = op.delivery!;
    const raw = {
      schemaVersion: 'rateloop.human-review-route.v1',
      action: 'private_review_assigned',
      opportunityId: op.opportunityId,
      authority: 'ask_automatically',
      lane: 'private_invited_unpaid',
      foundation: op.requestRaw!.foundation,
      delivery: {
        schemaVersion: 'rateloop.private-unpaid-review-delivery.v1',
        deliveryId: d.deliveryId,
        opportunityId: op.opportunityId,
        privateReviewId: d.privateReviewId,
        operationHash: commit({ deliveryId: d.deliveryId }),
        membershipSnapshotHash: commit({ cohort: this.fixture.cohortId }),
        responseDeadline: iso(d.deadline),
        status: 'pending',
        replayed,
        assignments: reviewerAssignments(d.deliveryId, d.deadline),
      },
    };
    return this.envelope(op, raw);
  }

  private newPrivateReview(projectId: string, contentTypes: string[], commitments: string[], t: number): Obj {
    return privateReviewDoc(this.fixture, projectId, contentTypes, commitments, t);
  }

  /** Three invited reviewers; what they answer, and when, is the test control's choice at assignment. */
  private newDelivery(
    opportunityId: string | null,
    privateReviewId: string,
    projectId: string,
    t: number,
    runListedEarly: boolean,
  ): Delivery {
    const deliveryId = `hpud_${sha(`${privateReviewId}\0${opportunityId ?? ''}`).slice(0, 40)}`;
    // The run the service projects from a terminal delivery: hau_ + 40 hex of SHA-256(deliveryId \0).
    const d: Delivery = {
      deliveryId,
      opportunityId,
      privateReviewId,
      projectId,
      createdAt: t,
      deadline: t + RESPONSE_WINDOW_SECONDS,
      plan: reviewerAnswers(this.outcome, t),
      runId: `hau_${sha(`${deliveryId}\0`).slice(0, 40)}`,
      runListedEarly,
    };
    this.deliveries.set(deliveryId, d);
    return d;
  }

  /** Moves a delivery (and its opportunity) on to what sandbox time has made of it. */
  private settle(op: Opportunity): void {
    const d = op.delivery;
    if (!d) return;
    this.settleDelivery(d);
    if (d.final && !['completed', 'inconclusive', 'failed_terminal'].includes(op.state)) {
      op.state = d.final.state;
      op.revision += 1;
      op.reasonCodes = [
        d.final.state === 'completed'
          ? 'human_review_completed'
          : d.final.state === 'inconclusive'
            ? 'human_review_inconclusive'
            : 'human_review_failed',
        ...(d.final.at === d.deadline ? ['response_deadline_elapsed'] : []),
      ];
      op.stateEnteredAt = d.final.at;
    }
  }

  private settleDelivery(d: Delivery): void {
    if (d.final) return;
    const t = this.now();
    const answered = d.plan.filter((a) => a.at <= t);
    const complete = answered.length === PANEL_SIZE;
    if (!complete && t < d.deadline) return;
    const at = complete ? Math.max(...answered.map((a) => a.at)) : d.deadline;
    const pos = answered.filter((a) => a.choice === 'positive').length;
    const neg = answered.length - pos;
    // A result needs a majority of the panel (minimum aggregation ⌊3/2⌋+1 = 2) and a winner.
    const outcome =
      answered.length === 0 ? 'failed' : answered.length < 2 || pos === neg ? 'inconclusive' : pos > neg ? 'positive' : 'negative';
    const state = outcome === 'failed' ? 'failed_terminal' : outcome === 'inconclusive' ? 'inconclusive' : 'completed';
    d.final = { state, outcome, at, responses: answered };
  }

  private responseCount(d: Delivery): number {
    return d.final ? d.final.responses.length : d.plan.filter((a) => a.at <= this.now()).length;
  }

  // --- wait and result --------------------------------------------------------------------------------------------

  requireRequested(opportunityId: string): Opportunity {
    const op = this.get(opportunityId);
    if (!op.requested) throw new WsError(409, 'review_not_requested', 'Human review has not been requested.');
    this.settle(op);
    return op;
  }

  /** The private wait snapshot (review.md §5.5.6). */
  waitSnapshot(op: Opportunity): Obj {
    const d = op.delivery!;
    const count = this.responseCount(d);
    return {
      schemaVersion: 'rateloop.private-review-wait.v1',
      deliveryId: d.deliveryId,
      status: d.final ? 'ready' : 'pending',
      lifecycle: { state: op.state, revision: op.revision },
      responseCount: count,
      responseDeadline: iso(d.deadline),
      outcome: d.final?.outcome ?? null,
      cursor: `${op.revision}:${count}`,
    };
  }

  /** Whether the review moved past a cursor ("revision" or "revision:count"), or has its result. */
  changedSince(op: Opportunity, cursor: string | undefined): boolean {
    if (op.delivery?.final) return true;
    if (cursor === undefined) return false;
    const [rev, count = '0'] = cursor.split(':');
    const n = this.responseCount(op.delivery!);
    return op.revision > Number(rev) || (op.revision === Number(rev) && n > Number(count));
  }

  waitEnvelope(op: Opportunity): Obj {
    return this.envelope(op, {
      schemaVersion: 'rateloop.adaptive-review-wait.v1',
      opportunityId: op.opportunityId,
      wait: this.waitSnapshot(op),
    });
  }

  resultEnvelope(op: Opportunity): Obj {
    const d = op.delivery!;
    if (!d.final) throw new WsError(409, 'result_not_ready', 'Human-review result is not ready.', true);
    return this.envelope(op, {
      schemaVersion: 'rateloop.adaptive-review-result.v1',
      opportunityId: op.opportunityId,
      result: this.humanResult(op),
      observation: null,
    });
  }

  private humanResult(op: Opportunity): Obj {
    const d = op.delivery!;
    const f = d.final!;
    const ref = (id: string, hash: string) => ({ id, version: 1, hash });
    const body: Obj = {
      schemaVersion: 'rateloop.human-review-result.v1',
      workspaceId: this.workspaceId,
      integrationId: this.fixture.integrationId,
      opportunityId: op.opportunityId,
      lane: 'private_unpaid',
      lifecycle: {
        state: f.state,
        terminal: true,
        revision: op.revision,
        reasonCodes: op.reasonCodes,
        startedAt: iso(d.createdAt),
        stateEnteredAt: iso(f.at),
        finalizedAt: iso(f.at),
      },
      frozen: {
        selectionPolicy: ref(this.fixture.policyId, this.fixture.selectionPolicyHash),
        binding: ref(this.fixture.bindingId, this.fixture.bindingHash),
        requestProfile: ref(this.fixture.profile.id, this.fixture.profile.hash),
        responseDeadline: iso(d.deadline),
      },
      panel: {
        requestedCount: PANEL_SIZE,
        assignedCount: PANEL_SIZE,
        responseCount: f.responses.length,
        cohorts: [{ source: 'invited', requestedCount: PANEL_SIZE, assignedCount: PANEL_SIZE, responseCount: f.responses.length }],
      },
      outcome: f.outcome,
      rationale: { mode: 'withheld', summary: null },
      economics: {
        asset: 'USDC',
        decimals: 6,
        guaranteedBase: { mode: 'off', fundedAtomic: '0', paidAtomic: '0', refundedAtomic: '0' },
        automaticQualityAllocation: { mode: 'off', availableAtomic: '0', awardedAtomic: '0', refundedAtomic: '0' },
        feedbackBonus: { mode: 'off', fundedAtomic: '0', awardedAtomic: '0', refundedAtomic: '0', awards: [] },
      },
      commitments: {
        sourceArtifact: op.sourceHash,
        suggestionArtifact: op.suggestionCommitment,
        responseSet: commit(f.responses),
        result: '',
      },
      terminalEvidence: null,
    };
    body.commitments.result = commit({ ...body, commitments: { ...body.commitments, result: null } });
    return body;
  }

  // --- the envelope and its signed evidence (review.md §5.6) -------------------------------------------------------

  private envelope(op: Opportunity, raw: Obj): Obj {
    this.settle(op);
    const terminal = ['skipped', 'completed', 'inconclusive', 'failed_terminal', 'cancelled_before_commit'].includes(op.state);
    const deadline = op.delivery?.deadline ?? op.createdAt + RESPONSE_WINDOW_SECONDS;
    return {
      ...raw,
      schemaVersion: 'rateloop.human-review-tool-envelope.v1',
      workspaceId: this.workspaceId,
      integrationId: this.fixture.integrationId,
      opportunityId: op.opportunityId,
      decision: 'required',
      lifecycle: { state: op.state, revision: op.revision, terminal, reasonCodes: op.reasonCodes, stateEnteredAt: iso(op.stateEnteredAt) },
      frozen: {
        selectionPolicy: { id: this.fixture.policyId, version: 1 },
        binding: { id: this.fixture.bindingId, version: 1, hash: this.fixture.bindingHash },
        requestProfile: { id: this.fixture.profile.id, version: this.fixture.profile.version, hash: this.fixture.profile.hash },
        evaluationCommitment: op.suggestionCommitment,
      },
      route: { lane: 'private_unpaid', authority: 'ask_automatically' },
      continuation: terminal ? null : { cursor: String(op.revision), retryAfterMs: 1000, expiresAt: iso(deadline) },
      terminalEvidence: terminal && !this.unsignedEvidence ? this.terminalEvidence(op) : null,
      rawResult: raw,
    };
  }

  private terminalEvidence(op: Opportunity): Obj {
    const f = op.delivery?.final;
    const positive = op.state === 'completed' && f?.outcome === 'positive';
    const payload = {
      schemaVersion: 'rateloop.human-review-terminal-payload.v2',
      workspaceId: this.workspaceId,
      integrationId: this.fixture.integrationId,
      opportunityId: op.opportunityId,
      terminalStatus: op.state,
      releaseDisposition: positive ? 'authorized_positive' : 'not_authorized',
      resultSemantics: 'assurance',
      resultOutcome: f?.outcome ?? null,
      resultCommitment: f ? this.humanResult(op).commitments.result : null,
      outputCommitment: op.suggestionCommitment,
      policyBindingHash: this.fixture.bindingHash,
      issuedAt: iso(op.stateEnteredAt),
    };
    const signature = cryptoSign(null, Buffer.from(JSON.stringify(payload), 'utf8'), this.gateKey.privateKey);
    return {
      schemaVersion: 'rateloop.human-review-terminal-evidence.v2',
      keyId: this.gateKey.keyId,
      payload,
      signature: b64url(signature),
    };
  }

  // --- open reviews -----------------------------------------------------------------------------------------------

  openReviews(cursor: string | undefined, limit: number): Obj {
    for (const op of this.opportunities.values()) this.settle(op);
    const open = [...this.opportunities.values()]
      .filter((o) => ['approval_required', 'request_ready', 'pending', 'blocked'].includes(o.state))
      .sort((a, b) => b.createdAt - a.createdAt || (a.opportunityId < b.opportunityId ? 1 : -1));
    let start = 0;
    if (cursor !== undefined) {
      let c: Obj;
      try {
        c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {
        throw new WsError(400, 'invalid_open_review_query', 'Open-review cursor is invalid.');
      }
      const i = open.findIndex((o) => o.opportunityId === c?.opportunityId);
      if (c?.version !== 1 || i < 0) throw new WsError(400, 'invalid_open_review_query', 'Open-review cursor is invalid.');
      start = i + 1;
    }
    const page = open.slice(start, start + limit);
    const last = page[page.length - 1];
    const more = start + limit < open.length;
    return {
      schemaVersion: 'rateloop.open-human-reviews.v1',
      items: page.map((o) => ({
        opportunityId: o.opportunityId,
        workflowKey: o.workflowKey,
        riskTier: o.riskTier,
        createdAt: iso(o.createdAt),
        lifecycle: { state: o.state, revision: o.revision, stateEnteredAt: iso(o.stateEnteredAt), updatedAt: iso(o.stateEnteredAt) },
        nextAction:
          o.state === 'pending'
            ? 'rateloop_wait_for_review'
            : o.state === 'blocked'
              ? 'rateloop_get_agent_context'
              : 'rateloop_request_review',
      })),
      nextCursor:
        more && last
          ? Buffer.from(JSON.stringify({ version: 1, createdAt: iso(last.createdAt), opportunityId: last.opportunityId })).toString(
              'base64url',
            )
          : null,
    };
  }

  /** Test control: what the hostile scenarios need to find another review. */
  someOtherOpportunity(opportunityId: string): string {
    return [...this.opportunities.keys()].find((id) => id !== opportunityId) ?? `aop_${hex(20)}`;
  }

  // --- private reviews over HTTP (review.md §6.4) ----------------------------------------------------------------

  createPrivateReview(p: Principal, body: Obj): Obj {
    if (p.kind !== 'integration')
      throw new WsError(409, 'private_review_integration_binding_mismatch', 'The agent integration credential does not match this caller.');
    if (body.integrationId !== this.fixture.integrationId)
      throw new WsError(409, 'private_review_integration_binding_mismatch', 'The agent integration credential does not match this caller.');
    const project = this.projects.get(body.projectId);
    if (!project || !project.holders.has(p.key)) throw new WsError(404, 'project_not_found', 'Project not found.');
    const rp = body.requestProfile as Obj;
    if (rp.id !== this.fixture.profile.id || rp.version !== this.fixture.profile.version || rp.hash !== this.fixture.profile.hash)
      throw new WsError(409, 'private_review_integration_binding_mismatch', 'The integration is not bound to this request profile.');
    if (body.cohortId !== this.fixture.cohortId)
      throw new WsError(404, 'private_review_binding_not_found', 'Private review binding not found.');
    if (body.dataClassification === 'restricted' || body.dataClassification === 'regulated')
      throw new WsError(403, 'credential_classification_forbidden', 'Credential classification does not permit this request.');
    const bytesCommitment = (b64: string) => `sha256:${createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex')}`;
    const commitments = [bytesCommitment(body.source.bytesBase64), bytesCommitment(body.suggestion.bytesBase64)];
    const requestHash = commit({
      caller: sha(p.key),
      cohort: body.cohortId,
      cls: body.dataClassification,
      integration: body.integrationId,
      project: body.projectId,
      profile: rp,
      types: [body.source.contentType, body.suggestion.contentType],
      commitments,
    });
    const key = `${body.integrationId}\0${body.idempotencyKey}`;
    const existing = this.privateReviews.get(key);
    if (existing) {
      if (existing.requestHash !== requestHash)
        throw new WsError(
          409,
          'private_review_idempotency_conflict',
          'This idempotency key was used for a different private review request.',
        );
      return existing.response;
    }
    const t = this.now();
    const response = this.newPrivateReview(project.projectId, [body.source.contentType, body.suggestion.contentType], commitments, t);
    this.newDelivery(null, response.privateReviewId, project.projectId, t, true);
    project.updatedAt = t;
    this.privateReviews.set(key, { requestHash, response });
    return response;
  }

  // --- projects and runs (review.md §6.1–6.3, §7.3) ---------------------------------------------------------------

  private runsOf(projectId: string): Delivery[] {
    const out: Delivery[] = [];
    for (const d of this.deliveries.values()) {
      if (d.projectId !== projectId) continue;
      if (d.opportunityId) {
        const op = this.opportunities.get(d.opportunityId);
        if (op) this.settle(op);
      }
      this.settleDelivery(d);
      if (d.runListedEarly || d.final) out.push(d);
    }
    return out.sort((a, b) => b.createdAt - a.createdAt);
  }

  runDoc(d: Delivery): Obj {
    return {
      runId: d.runId,
      suiteId: `has_${sha(`${d.deliveryId}\0suite`).slice(0, 40)}`,
      suiteVersion: 1,
      audiencePolicyId: `haa_${sha(`${d.deliveryId}\0policy`).slice(0, 40)}`,
      audiencePolicyVersion: 1,
      status: d.final ? 'completed' : 'collecting',
      manifestHash: commit({ run: d.runId }),
      previousRunId: null,
      createdAt: iso(d.createdAt),
      updatedAt: iso(d.final?.at ?? d.createdAt),
      completedAt: d.final ? iso(d.final.at) : null,
    };
  }

  project(p: Principal, projectId: string): Obj {
    const project = this.projects.get(projectId);
    if (!project || !project.holders.has(p.key)) throw new WsError(404, 'assurance_project_not_found', 'Assurance project not found.');
    return {
      schemaVersion: 'rateloop.human-assurance.v2',
      projectId,
      suites: [],
      policies: [],
      runs: this.runsOf(projectId).map((d) => this.runDoc(d)),
    };
  }

  runStatus(p: Principal, runId: string): Obj {
    const d = [...this.deliveries.values()].find((x) => x.runId === runId);
    if (d?.opportunityId) {
      const op = this.opportunities.get(d.opportunityId);
      if (op) this.settle(op);
    }
    if (d) this.settleDelivery(d);
    if (!d || !this.projects.get(d.projectId)?.holders.has(p.key) || (!d.runListedEarly && !d.final))
      throw new WsError(404, 'assurance_run_not_found', 'Assurance run not found.');
    const answers = d.final?.responses ?? d.plan.filter((a) => a.at <= this.now());
    const candidate = answers.filter((a) => a.choice === 'positive').length;
    const baseline = answers.length - candidate;
    const valid = candidate + baseline;
    const share = valid > 0 ? Math.floor((candidate * 10000) / valid) : null;
    const passRule = { metric: 'candidate_preference_share_bps', operator: 'gte', thresholdBps: 5001, minimumValidResponses: 2 };
    return {
      schemaVersion: 'rateloop.human-assurance.v2',
      runId,
      runStatus: d.final ? 'completed' : 'collecting',
      totalCases: 1,
      totalPanelCases: 1,
      calibrationCaseCount: 0,
      roundStates: d.final ? { finalized: 1 } : { open: 1 },
      deterministicChecks: { notApplicable: 1, pending: 0, passed: 0, failed: 0 },
      responses: { baseline, candidate, tie: 0, valid },
      candidatePreferenceShareBps: share,
      passRule,
      decision: valid < passRule.minimumValidResponses ? 'pending' : share! >= passRule.thresholdBps ? 'passed' : 'failed',
      rerun: null,
    };
  }

  /** Completed runs, for the evidence packets (one case; the responses as the votes). */
  completedRuns(): RunSource[] {
    const out: RunSource[] = [];
    for (const d of this.deliveries.values()) {
      this.settleDelivery(d);
      if (!d.final) continue;
      const up = d.final.responses.filter((a) => a.choice === 'positive').length;
      out.push({
        runId: d.runId,
        contentId: '0',
        title: `Private review ${d.privateReviewId}`,
        up,
        down: d.final.responses.length - up,
        settledAt: iso(d.final.at),
      });
    }
    return out;
  }

  /** The next sandbox time at which a review changes (a reviewer answers or a window closes), for --auto-advance. */
  nextWake(): number | undefined {
    const t = this.now();
    let next: number | undefined;
    for (const d of this.deliveries.values()) {
      if (d.final) continue;
      const upcoming = [...d.plan.map((a) => a.at), d.deadline].filter((x) => x > t);
      const soonest = Math.min(...upcoming);
      if (Number.isFinite(soonest) && (next === undefined || soonest < next)) next = soonest;
    }
    return next;
  }

  /** A review for a generated draft (the seed-only generation route): evaluated and requested at once. */
  reviewDraft(key: string, source: string, draft: string): Obj {
    const args = draftEvaluationArgs(this.fixture, key, source, draft);
    const env = this.evaluate(args);
    return this.request(
      {
        opportunityId: env.opportunityId,
        material: { kind: 'private', sourceContentType: 'text/plain', suggestionContentType: 'text/plain' },
      },
      source,
      draft,
    );
  }
}
