// The sandbox's workspace for invited review (review.md §5–7, §9): one workspace with a project, an approved agent
// integration bound to a private-invited request profile and a cohort of three invited reviewers, and the review
// lifecycle the workspace MCP tools and the assurance routes expose. Reviewers answer as sandbox time passes (the
// chain's clock: test controls and --auto-advance move it); how a review ends is a test control. A terminal review
// is signed with the sandbox's evidence key (listed for human_review_gate) and projected into a completed run whose
// evidence packet the evidence routes sign. Nothing outside the sandbox imports this.
import { createHash, randomBytes, sign as cryptoSign } from 'node:crypto';
import { canonicalJson } from '../../protocol/canonical.js';
import { b64url } from '../../evidence/keys.js';
import type { RunSource } from './evidence.js';

export type Scope = 'panel:publish' | 'payment:submit' | 'result:read' | 'evaluation:read' | 'review:decide' | 'telemetry:write';
export const ALL_SCOPES: Scope[] = ['evaluation:read', 'panel:publish', 'payment:submit', 'result:read', 'review:decide', 'telemetry:write'];
export type ReviewOutcome = 'approved' | 'rejected' | 'inconclusive' | 'failed';

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

interface Answer {
  at: number;
  choice: 'positive' | 'negative';
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
  final?: { state: 'completed' | 'inconclusive' | 'failed_terminal'; outcome: 'positive' | 'negative' | 'inconclusive' | 'failed'; at: number; responses: Answer[] };
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

export const PANEL_SIZE = 3;
export const RESPONSE_WINDOW_SECONDS = 1200;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const sha = (v: string) => createHash('sha256').update(v).digest('hex');
const commit = (v: unknown) => `sha256:${sha(typeof v === 'string' ? v : canonicalJson(v))}`;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
/** A workspace API key as the service issues it: rlk_ + 16 hex + _ + base64url of 32 bytes. */
export const newApiKey = () => `rlk_${hex(8)}_${randomBytes(32).toString('base64url')}`;

export class ReviewWorkspace {
  readonly integrationId = `agi_${hex(16)}`;
  readonly agentId = `agt_${hex(16)}`;
  readonly agentVersionId = `agtv_${hex(16)}`;
  readonly policyId = `arp_${hex(16)}`;
  readonly publishingPolicyId = `agpol_${hex(16)}`;
  readonly bindingId = `hrb_${hex(16)}`;
  readonly cohortId = `hacoh_${hex(16)}`;
  readonly privateGroupId = `hapg_${hex(16)}`;
  readonly workflowKey = 'support-reply';
  readonly profile: { id: string; version: number; hash: string; criterion: string };
  readonly bindingHash: string;
  readonly audiencePolicyHash: string;
  readonly selectionPolicyHash: string;
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
    const profileId = `rrp_${hex(16)}`;
    const criterion = 'Is this output correct and safe to use';
    this.profile = { id: profileId, version: 1, hash: commit({ profileId, version: 1, criterion, audience: 'private_invited', panelSize: PANEL_SIZE, responseWindowSeconds: RESPONSE_WINDOW_SECONDS }), criterion };
    this.bindingHash = commit({ bindingId: this.bindingId, profile: this.profile.hash, cohort: this.cohortId });
    this.audiencePolicyHash = commit({ reviewerSource: 'customer_invited', privateGroup: this.privateGroupId });
    this.selectionPolicyHash = commit({ policyId: this.policyId, mode: 'always' });
    this.keys.set(integrationKey, { key: integrationKey, kind: 'integration', scopes: new Set(ALL_SCOPES) });
    const t = now();
    this.projectId = `hap_${hex(16)}`;
    this.projects.set(this.projectId, { projectId: this.projectId, name: 'Sandbox review project', description: 'Invited review in the local sandbox.', dataClassification: 'confidential', retentionDays: 90, createdAt: t, updatedAt: t, holders: new Set([integrationKey]) });
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
    return {
      schemaVersion: 'rateloop.agent-context.v2',
      integrationId: this.integrationId,
      workspaceId: this.workspaceId,
      agentId: this.agentId,
      agentVersionId: this.agentVersionId,
      status: 'active',
      enforcementMode: 'advisory',
      enforcementBoundary: 'advisory',
      reportedLane: null,
      allowedWorkflowKeys: [this.workflowKey],
      reviewPolicy: { policyId: this.policyId, version: 1, audiencePolicyHash: this.audiencePolicyHash },
      publishingPolicy: { policyId: this.publishingPolicyId, version: 1 },
      humanReview: {
        status: 'configured',
        binding: { bindingId: this.bindingId, version: 1, hash: this.bindingHash },
        selection: {
          policyId: this.policyId,
          version: 1,
          frequency: { mode: 'always', fixedRateBps: null, agreementThresholdBps: 7000, productionFloorBps: 1000, maximumUnreviewedGap: 20 },
          rules: { requiredRiskTiers: [], criticalRiskTiers: ['critical'], minimumConfidenceBps: 7000, maximumLatencyMs: 120000 },
          audiencePolicyHash: this.audiencePolicyHash,
          enforcementMode: 'advisory',
        },
        requestProfile: {
          profileId: this.profile.id,
          version: this.profile.version,
          hash: this.profile.hash,
          status: 'ready',
          questionAuthority: 'owner_fixed',
          resultSemantics: 'assurance',
          criterion: this.profile.criterion,
          labels: { positive: 'Approve', negative: 'Reject' },
          rationaleMode: 'optional',
          audience: { type: 'private_invited', contentBoundary: 'private_workspace', privateSensitivity: 'confidential', privateGroup: this.privateGroupId, requiredExpertiseKeys: [], expertiseRequirements: [] },
          responseWindowSeconds: RESPONSE_WINDOW_SECONDS,
          panelSize: PANEL_SIZE,
          compensation: { mode: 'unpaid', bountyPerSeatAtomic: null },
          feedbackBonus: { enabled: false, poolAtomic: null, awarderKind: 'requester', awarderAccount: null, awardWindowSeconds: null, agentMayAward: false },
        },
        authority: 'ask_automatically',
        blockingReason: null,
      },
      publishingGrant: {
        active: true,
        reason: 'active',
        configuredPolicy: { policyId: this.publishingPolicyId, version: 1 },
        integrationPolicy: { policyId: this.publishingPolicyId, version: 1 },
        activationMode: 'owner_grant',
        exactBinding: true,
        policyActive: true,
        grantedScopes: ['panel:publish'],
        credentialScopes: [...p.scopes].sort(),
        allowedWorkflowKeys: [this.workflowKey],
      },
      capabilities: {
        implementedLanes: {
          privateInvitedUnpaid: { available: true, message: 'Implemented in the sandbox.' },
          privateInvitedPaid: { available: false, message: 'Not in the sandbox.' },
          publicPaidNetwork: { available: false, message: 'Not in the sandbox.' },
          hybridPublicSafe: { available: false, message: 'Not in the sandbox.' },
        },
        ownerApproval: { available: true },
        autonomousPublishing: { available: true, reason: 'active' },
        effectiveLane: { available: true, code: 'private_invited_unpaid_lane_ready', lane: 'private_invited_unpaid', message: 'Invited reviewers of the bound cohort review each requested output.' },
      },
      safeAccess: { canCheckReviewRequirement: true, canSpend: false, canPublish: true, canReadPrivateArtifacts: false, canAdministerWorkspace: false },
    };
  }

  private executionProfile(exec: Obj): Obj {
    const primary = (exec.generationSpans as Obj[]).find((s) => s.role === 'primary')!;
    const model = (s: Obj) => ({ provider: s.provider, requestedModel: s.requestedModel, resolvedModel: s.resolvedModel ?? null, modelVersion: s.modelVersion ?? null, reasoningEffort: s.reasoningEffort ?? null, serviceTier: s.serviceTier ?? null });
    return { schemaVersion: 'rateloop.execution-profile.v2', orchestrationMode: exec.generationSpans.length > 1 ? 'multi_model' : 'single_model', primary: model(primary), contributors: (exec.generationSpans as Obj[]).map(model) };
  }

  private scopeOf(workflowKey: string, profileHash: string): string {
    return `evs_${sha(`${this.workspaceId}\0${this.agentVersionId}\0${workflowKey}\0${profileHash}`).slice(0, 40)}`;
  }

  private stateFields(scopeId: string, profile: Obj | null): Obj {
    const mine = [...this.opportunities.values()].filter((o) => o.scopeId === scopeId);
    return {
      schemaVersion: 'rateloop.assurance-state.v1',
      workspaceId: this.workspaceId,
      agentId: this.agentId,
      agentVersionId: this.agentVersionId,
      scopeId,
      policyId: this.policyId,
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
    return `aop_${sha(`${this.workspaceId}\0${this.agentId}\0${externalOpportunityId}`).slice(0, 40)}`;
  }

  /** Arguments already checked for their keys (MCP) or coming from the sandbox itself (generation). */
  evaluate(args: Obj): Obj {
    if (args.audiencePolicyHash !== this.audiencePolicyHash) throw new WsError(409, 'review_policy_mismatch', 'The opportunity audience does not match the frozen review policy.');
    if (args.workflowKey !== this.workflowKey) throw new WsError(403, 'workflow_not_allowed', 'This workflow is not allowed for the integration.');
    const exec = args.execution as Obj;
    const spans = Array.isArray(exec?.generationSpans) ? (exec.generationSpans as Obj[]) : [];
    if (spans.length < 1 || spans.length > 64 || spans.filter((s) => s.role === 'primary' && s.spanId === exec.primarySpanId).length !== 1) {
      throw new WsError(400, 'invalid_execution_provenance', 'Exactly one primary generation span must match primarySpanId.');
    }
    const opportunityId = this.opportunityIdOf(args.externalOpportunityId);
    const argsDigest = commit(args);
    const executionId = `aex_${sha(`${this.workspaceId}\0${this.agentId}\0${exec.externalExecutionId}`).slice(0, 40)}`;
    const executionDigest = commit(exec);
    const existing = this.opportunities.get(opportunityId);
    if (existing) {
      if (existing.argsDigest !== argsDigest) throw new WsError(409, 'review_opportunity_conflict', 'externalOpportunityId is already bound to different immutable inputs.');
      return this.envelope(existing, existing.raw);
    }
    const other = [...this.opportunities.values()].find((o) => o.executionId === executionId);
    if (other && other.executionDigest !== executionDigest) throw new WsError(409, 'execution_provenance_conflict', 'externalExecutionId is already bound to different provenance.');
    const t = this.now();
    const profile = this.executionProfile(exec);
    const scopeId = this.scopeOf(args.workflowKey, commit(profile));
    const metadataCommitment = commit({ opportunityId, workflowKey: args.workflowKey, riskTier: args.riskTier, declaredConfidenceBps: args.declaredConfidenceBps ?? null, criticalRisk: args.criticalRisk ?? false, metadataComplete: args.metadataComplete });
    const spansOut = spans.map((s) => ({
      spanId: s.spanId, parentSpanId: s.parentSpanId ?? null, role: s.role, provider: s.provider, requestedModel: s.requestedModel, resolvedModel: s.resolvedModel ?? null, modelVersion: s.modelVersion ?? null,
      reasoningEffort: s.reasoningEffort ?? null, serviceTier: s.serviceTier ?? null, startedAt: s.startedAt ?? null, completedAt: s.completedAt ?? null,
      durationMs: s.startedAt && s.completedAt ? Date.parse(s.completedAt) - Date.parse(s.startedAt) : null, timeToFirstOutputMs: s.timeToFirstOutputMs ?? null,
      inputTokens: s.inputTokens ?? null, cachedInputTokens: s.cachedInputTokens ?? null, outputTokens: s.outputTokens ?? null, reasoningOutputTokens: s.reasoningOutputTokens ?? null,
      responseIdHash: s.responseIdHash ?? null, finishReason: s.finishReason ?? null,
    }));
    const sum = (k: string) => (spansOut.some((s: Obj) => s[k] !== null) ? spansOut.reduce((a: number, s: Obj) => a + (s[k] ?? 0), 0) : null);
    const manifest = {
      schemaVersion: 'rateloop.execution-manifest.v1', externalExecutionId: exec.externalExecutionId, status: exec.status, startedAt: exec.startedAt ?? null, completedAt: exec.completedAt ?? null,
      durationMs: exec.startedAt && exec.completedAt ? Date.parse(exec.completedAt) - Date.parse(exec.startedAt) : null, toolCallCount: exec.toolCallCount ?? null, toolDurationMs: exec.toolDurationMs ?? null,
      primarySpanId: exec.primarySpanId, generationSpans: spansOut,
      totals: { generationSpanCount: spansOut.length, generationDurationMs: sum('durationMs'), toolCallCount: exec.toolCallCount ?? null, toolDurationMs: exec.toolDurationMs ?? null, inputTokens: sum('inputTokens'), cachedInputTokens: sum('cachedInputTokens'), outputTokens: sum('outputTokens'), reasoningOutputTokens: sum('reasoningOutputTokens'), totalTokens: sum('inputTokens') === null ? null : (sum('inputTokens') ?? 0) + (sum('outputTokens') ?? 0) },
    };
    const manifestCommitment = commit(manifest);
    const op: Opportunity = {
      opportunityId, externalOpportunityId: args.externalOpportunityId, argsDigest, executionId, executionDigest, workflowKey: args.workflowKey, riskTier: args.riskTier, scopeId, raw: {}, createdAt: t,
      suggestionCommitment: args.suggestionCommitment, sourceHash: args.sourceEvidence.hash, state: 'request_ready', revision: 2, reasonCodes: ['always_review', 'private_invited_unpaid_lane_ready'], stateEnteredAt: t, requested: false, question: null,
    };
    this.opportunities.set(opportunityId, op);
    op.raw = {
      ...this.stateFields(scopeId, profile),
      schemaVersion: 'rateloop.review-decision.v1',
      opportunityId, externalOpportunityId: args.externalOpportunityId, decision: 'required', required: true, reasonCodes: ['always_review'], selectionProbabilityBps: 10000,
      sampleBucket: parseInt(sha(opportunityId).slice(0, 8), 16) % 10000, policyFrozen: true, suggestionCommitment: args.suggestionCommitment, metadataCommitment,
      sourceEvidenceHash: args.sourceEvidence.hash, executionId, executionManifestCommitment: manifestCommitment,
      executionEvidence: {
        schemaVersion: 'rateloop.execution-evidence.v1', executionId, opportunityBinding: { opportunityId, metadataCommitment }, source: { kind: 'host_reported', independentlyVerified: false, attestation: null },
        manifest, manifestCommitment, executionProfile: profile, executionProfileHash: commit(profile), evidenceCommitment: commit({ executionId, manifestCommitment }),
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
    if (!['approval_required', 'request_ready', 'pending', 'blocked'].includes(op.state)) throw new WsError(409, 'review_routing_binding_mismatch', 'The opportunity no longer matches an open review route.');
    if (commit(sourcePayload) !== op.sourceHash) throw new WsError(409, 'source_payload_commitment_mismatch', 'sourcePayload does not match the committed source evidence.');
    if (commit(suggestionPayload) !== op.suggestionCommitment) throw new WsError(409, 'suggestion_payload_commitment_mismatch', 'suggestionPayload does not match the committed suggestion.');
    if (args.question !== undefined) throw new WsError(400, 'review_question_override_not_allowed', 'The bound request profile does not allow question overrides.');
    const material = args.material as Obj | undefined;
    if (!material) throw new WsError(400, 'invalid_tool_arguments', 'Review material is required for automatic routing.');
    if (material.kind !== 'private') throw new WsError(409, 'review_material_lane_mismatch', 'Review material does not match the private invited lane.');
    if (this.profile.criterion.length + 163 + JSON.stringify(sourcePayload).length + JSON.stringify(suggestionPayload).length > 4000) throw new WsError(413, 'review_payload_too_large', 'The reviewer prompt exceeds 4000 characters.');
    const replayed = op.requested;
    if (!op.requested) {
      const t = this.now();
      const foundation = this.newPrivateReview(this.projectId, [material.sourceContentType, material.suggestionContentType], [op.sourceHash, op.suggestionCommitment], t);
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
        schemaVersion: 'rateloop.private-unpaid-review-delivery.v1', deliveryId: d.deliveryId, opportunityId: op.opportunityId, privateReviewId: d.privateReviewId,
        operationHash: commit({ deliveryId: d.deliveryId }), membershipSnapshotHash: commit({ cohort: this.cohortId }), responseDeadline: iso(d.deadline), status: 'pending', replayed,
        assignments: [0, 1, 2].map((i) => ({ assignmentId: `hpua_${sha(`${d.deliveryId}:${i}`).slice(0, 40)}`, reviewerAccountAddress: `0x${sha(`reviewer:${i}`).slice(0, 40)}`, reservationExpiresAt: iso(d.deadline), status: 'reserved' })),
      },
    };
    return this.envelope(op, raw);
  }

  private newPrivateReview(projectId: string, contentTypes: string[], commitments: string[], t: number): Obj {
    const privateReviewId = `hpr_${hex(16)}`;
    return {
      schemaVersion: 'rateloop.human-assurance.v2',
      privateReviewId,
      status: 'ready_for_assignment',
      lane: 'private',
      task: { kind: 'binary_review', commitment: commit({ privateReviewId, commitments, contentTypes }) },
      bindings: {
        bindingHash: this.bindingHash,
        project: { projectId, hash: commit({ projectId }) },
        requestProfile: { id: this.profile.id, version: this.profile.version, hash: this.profile.hash },
        privateGroup: { groupId: this.privateGroupId, policyVersion: 1, policyHash: commit({ group: this.privateGroupId }), allowlistHash: commit({ projects: [projectId] }), allowlistStatus: 'allowed' },
        cohort: { cohortId: this.cohortId, hash: commit({ cohort: this.cohortId }) },
      },
      artifacts: { sourceArtifactId: `art_${hex(16)}`, suggestionArtifactId: `art_${hex(16)}` },
      responseWindowSeconds: RESPONSE_WINDOW_SECONDS,
      responseDeadline: iso(t + RESPONSE_WINDOW_SECONDS),
    };
  }

  /** Three invited reviewers; what they answer, and when, is the test control's choice at assignment. */
  private newDelivery(opportunityId: string | null, privateReviewId: string, projectId: string, t: number, runListedEarly: boolean): Delivery {
    const deliveryId = `hpud_${sha(`${privateReviewId}\0${opportunityId ?? ''}`).slice(0, 40)}`;
    const plans: Record<ReviewOutcome, Answer[]> = {
      approved: [60, 120, 180].map((s) => ({ at: t + s, choice: 'positive' })),
      rejected: [60, 120, 180].map((s) => ({ at: t + s, choice: 'negative' })),
      inconclusive: [{ at: t + 60, choice: 'positive' }, { at: t + 120, choice: 'negative' }],
      failed: [],
    };
    // The run the service projects from a terminal delivery: hau_ + 40 hex of SHA-256(deliveryId \0).
    const d: Delivery = { deliveryId, opportunityId, privateReviewId, projectId, createdAt: t, deadline: t + RESPONSE_WINDOW_SECONDS, plan: plans[this.outcome], runId: `hau_${sha(`${deliveryId}\0`).slice(0, 40)}`, runListedEarly };
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
      op.reasonCodes = [d.final.state === 'completed' ? 'human_review_completed' : d.final.state === 'inconclusive' ? 'human_review_inconclusive' : 'human_review_failed', ...(d.final.at === d.deadline ? ['response_deadline_elapsed'] : [])];
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
    const outcome = answered.length === 0 ? 'failed' : answered.length < 2 || pos === neg ? 'inconclusive' : pos > neg ? 'positive' : 'negative';
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
    return this.envelope(op, { schemaVersion: 'rateloop.adaptive-review-wait.v1', opportunityId: op.opportunityId, wait: this.waitSnapshot(op) });
  }

  resultEnvelope(op: Opportunity): Obj {
    const d = op.delivery!;
    if (!d.final) throw new WsError(409, 'result_not_ready', 'Human-review result is not ready.', true);
    return this.envelope(op, { schemaVersion: 'rateloop.adaptive-review-result.v1', opportunityId: op.opportunityId, result: this.humanResult(op), observation: null });
  }

  private humanResult(op: Opportunity): Obj {
    const d = op.delivery!;
    const f = d.final!;
    const ref = (id: string, hash: string) => ({ id, version: 1, hash });
    const body: Obj = {
      schemaVersion: 'rateloop.human-review-result.v1', workspaceId: this.workspaceId, integrationId: this.integrationId, opportunityId: op.opportunityId, lane: 'private_unpaid',
      lifecycle: { state: f.state, terminal: true, revision: op.revision, reasonCodes: op.reasonCodes, startedAt: iso(d.createdAt), stateEnteredAt: iso(f.at), finalizedAt: iso(f.at) },
      frozen: { selectionPolicy: ref(this.policyId, this.selectionPolicyHash), binding: ref(this.bindingId, this.bindingHash), requestProfile: ref(this.profile.id, this.profile.hash), responseDeadline: iso(d.deadline) },
      panel: { requestedCount: PANEL_SIZE, assignedCount: PANEL_SIZE, responseCount: f.responses.length, cohorts: [{ source: 'invited', requestedCount: PANEL_SIZE, assignedCount: PANEL_SIZE, responseCount: f.responses.length }] },
      outcome: f.outcome,
      rationale: { mode: 'withheld', summary: null },
      economics: {
        asset: 'USDC', decimals: 6,
        guaranteedBase: { mode: 'off', fundedAtomic: '0', paidAtomic: '0', refundedAtomic: '0' },
        automaticQualityAllocation: { mode: 'off', availableAtomic: '0', awardedAtomic: '0', refundedAtomic: '0' },
        feedbackBonus: { mode: 'off', fundedAtomic: '0', awardedAtomic: '0', refundedAtomic: '0', awards: [] },
      },
      commitments: { sourceArtifact: op.sourceHash, suggestionArtifact: op.suggestionCommitment, responseSet: commit(f.responses), result: '' },
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
      integrationId: this.integrationId,
      opportunityId: op.opportunityId,
      decision: 'required',
      lifecycle: { state: op.state, revision: op.revision, terminal, reasonCodes: op.reasonCodes, stateEnteredAt: iso(op.stateEnteredAt) },
      frozen: {
        selectionPolicy: { id: this.policyId, version: 1 },
        binding: { id: this.bindingId, version: 1, hash: this.bindingHash },
        requestProfile: { id: this.profile.id, version: this.profile.version, hash: this.profile.hash },
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
      integrationId: this.integrationId,
      opportunityId: op.opportunityId,
      terminalStatus: op.state,
      releaseDisposition: positive ? 'authorized_positive' : 'not_authorized',
      resultSemantics: 'assurance',
      resultOutcome: f?.outcome ?? null,
      resultCommitment: f ? this.humanResult(op).commitments.result : null,
      outputCommitment: op.suggestionCommitment,
      policyBindingHash: this.bindingHash,
      issuedAt: iso(op.stateEnteredAt),
    };
    const signature = cryptoSign(null, Buffer.from(JSON.stringify(payload), 'utf8'), this.gateKey.privateKey);
    return { schemaVersion: 'rateloop.human-review-terminal-evidence.v2', keyId: this.gateKey.keyId, payload, signature: b64url(signature) };
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
        opportunityId: o.opportunityId, workflowKey: o.workflowKey, riskTier: o.riskTier, createdAt: iso(o.createdAt),
        lifecycle: { state: o.state, revision: o.revision, stateEnteredAt: iso(o.stateEnteredAt), updatedAt: iso(o.stateEnteredAt) },
        nextAction: o.state === 'pending' ? 'rateloop_wait_for_review' : o.state === 'blocked' ? 'rateloop_get_agent_context' : 'rateloop_request_review',
      })),
      nextCursor: more && last ? Buffer.from(JSON.stringify({ version: 1, createdAt: iso(last.createdAt), opportunityId: last.opportunityId })).toString('base64url') : null,
    };
  }

  /** Test control: what the hostile scenarios need to find another review. */
  someOtherOpportunity(opportunityId: string): string {
    return [...this.opportunities.keys()].find((id) => id !== opportunityId) ?? `aop_${hex(20)}`;
  }

  // --- private reviews over HTTP (review.md §6.4) ----------------------------------------------------------------

  createPrivateReview(p: Principal, body: Obj): Obj {
    if (p.kind !== 'integration') throw new WsError(409, 'private_review_integration_binding_mismatch', 'The agent integration credential does not match this caller.');
    if (body.integrationId !== this.integrationId) throw new WsError(409, 'private_review_integration_binding_mismatch', 'The agent integration credential does not match this caller.');
    const project = this.projects.get(body.projectId);
    if (!project || !project.holders.has(p.key)) throw new WsError(404, 'project_not_found', 'Project not found.');
    const rp = body.requestProfile as Obj;
    if (rp.id !== this.profile.id || rp.version !== this.profile.version || rp.hash !== this.profile.hash) throw new WsError(409, 'private_review_integration_binding_mismatch', 'The integration is not bound to this request profile.');
    if (body.cohortId !== this.cohortId) throw new WsError(404, 'private_review_binding_not_found', 'Private review binding not found.');
    if (body.dataClassification === 'restricted' || body.dataClassification === 'regulated') throw new WsError(403, 'credential_classification_forbidden', 'Credential classification does not permit this request.');
    const bytesCommitment = (b64: string) => `sha256:${createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex')}`;
    const commitments = [bytesCommitment(body.source.bytesBase64), bytesCommitment(body.suggestion.bytesBase64)];
    const requestHash = commit({ caller: sha(p.key), cohort: body.cohortId, cls: body.dataClassification, integration: body.integrationId, project: body.projectId, profile: rp, types: [body.source.contentType, body.suggestion.contentType], commitments });
    const key = `${body.integrationId}\0${body.idempotencyKey}`;
    const existing = this.privateReviews.get(key);
    if (existing) {
      if (existing.requestHash !== requestHash) throw new WsError(409, 'private_review_idempotency_conflict', 'This idempotency key was used for a different private review request.');
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
      runId: d.runId, suiteId: `has_${sha(`${d.deliveryId}\0suite`).slice(0, 40)}`, suiteVersion: 1, audiencePolicyId: `haa_${sha(`${d.deliveryId}\0policy`).slice(0, 40)}`, audiencePolicyVersion: 1,
      status: d.final ? 'completed' : 'collecting', manifestHash: commit({ run: d.runId }), previousRunId: null, createdAt: iso(d.createdAt), updatedAt: iso(d.final?.at ?? d.createdAt), completedAt: d.final ? iso(d.final.at) : null,
    };
  }

  project(p: Principal, projectId: string): Obj {
    const project = this.projects.get(projectId);
    if (!project || !project.holders.has(p.key)) throw new WsError(404, 'assurance_project_not_found', 'Assurance project not found.');
    return { schemaVersion: 'rateloop.human-assurance.v2', projectId, suites: [], policies: [], runs: this.runsOf(projectId).map((d) => this.runDoc(d)) };
  }

  runStatus(p: Principal, runId: string): Obj {
    const d = [...this.deliveries.values()].find((x) => x.runId === runId);
    if (d?.opportunityId) {
      const op = this.opportunities.get(d.opportunityId);
      if (op) this.settle(op);
    }
    if (d) this.settleDelivery(d);
    if (!d || !this.projects.get(d.projectId)?.holders.has(p.key) || (!d.runListedEarly && !d.final)) throw new WsError(404, 'assurance_run_not_found', 'Assurance run not found.');
    const answers = d.final?.responses ?? d.plan.filter((a) => a.at <= this.now());
    const candidate = answers.filter((a) => a.choice === 'positive').length;
    const baseline = answers.length - candidate;
    const valid = candidate + baseline;
    const share = valid > 0 ? Math.floor((candidate * 10000) / valid) : null;
    const passRule = { metric: 'candidate_preference_share_bps', operator: 'gte', thresholdBps: 5001, minimumValidResponses: 2 };
    return {
      schemaVersion: 'rateloop.human-assurance.v2', runId, runStatus: d.final ? 'completed' : 'collecting', totalCases: 1, totalPanelCases: 1, calibrationCaseCount: 0,
      roundStates: d.final ? { finalized: 1 } : { open: 1 }, deterministicChecks: { notApplicable: 1, pending: 0, passed: 0, failed: 0 },
      responses: { baseline, candidate, tie: 0, valid }, candidatePreferenceShareBps: share, passRule,
      decision: valid < passRule.minimumValidResponses ? 'pending' : share! >= passRule.thresholdBps ? 'passed' : 'failed', rerun: null,
    };
  }

  /** Completed runs, for the evidence packets (one case; the responses as the votes). */
  completedRuns(): RunSource[] {
    const out: RunSource[] = [];
    for (const d of this.deliveries.values()) {
      this.settleDelivery(d);
      if (!d.final) continue;
      const up = d.final.responses.filter((a) => a.choice === 'positive').length;
      out.push({ runId: d.runId, contentId: '0', title: `Private review ${d.privateReviewId}`, up, down: d.final.responses.length - up, settledAt: iso(d.final.at) });
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
    const args = {
      externalOpportunityId: `generation:${sha(key).slice(0, 32)}`,
      workflowKey: this.workflowKey,
      riskTier: 'low',
      audiencePolicyHash: this.audiencePolicyHash,
      suggestionCommitment: commit(draft),
      sourceEvidence: { reference: `generation/${sha(key).slice(0, 16)}`, hash: commit(source) },
      declaredConfidenceBps: null,
      criticalRisk: false,
      metadataComplete: true,
      execution: { externalExecutionId: `generation:${sha(key).slice(0, 32)}`, status: 'completed', startedAt: null, completedAt: null, toolCallCount: null, toolDurationMs: null, primarySpanId: 'primary', generationSpans: [{ spanId: 'primary', parentSpanId: null, role: 'primary', provider: 'sandbox', requestedModel: 'sandbox-draft-1' }] },
    };
    const env = this.evaluate(args);
    return this.request({ opportunityId: env.opportunityId, material: { kind: 'private', sourceContentType: 'text/plain', suggestionContentType: 'text/plain' } }, source, draft);
  }
}
