// The sandbox workspace for invited review as it is set up (review.md §5–7, §9), apart from the state machine
// that runs reviews in it (review-workspace.ts): the ids and commitments of its agent, policies, binding, cohort
// and request profile; its project; the agent-context document; the execution profile and manifest derived from
// what an agent reports; the private review a request creates; what the three invited reviewers answer (the test
// control's outcome); and the evaluation the generation route files for a draft. All canned, none of it changes.
import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../../protocol/canonical.js';

export type Scope = 'panel:publish' | 'payment:submit' | 'result:read' | 'evaluation:read' | 'review:decide' | 'telemetry:write';
export const ALL_SCOPES: Scope[] = [
  'evaluation:read',
  'panel:publish',
  'payment:submit',
  'result:read',
  'review:decide',
  'telemetry:write',
];
export type ReviewOutcome = 'approved' | 'rejected' | 'inconclusive' | 'failed';

type Obj = Record<string, any>;

export const PANEL_SIZE = 3;
export const RESPONSE_WINDOW_SECONDS = 1200;
export const hex = (bytes: number) => randomBytes(bytes).toString('hex');
export const sha = (v: string) => createHash('sha256').update(v).digest('hex');
/** A commitment as the service writes it: sha256: + the hex digest of the canonical JSON (or of the string itself). */
export const commit = (v: unknown) => `sha256:${sha(typeof v === 'string' ? v : canonicalJson(v))}`;
export const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
/** A workspace API key as the service issues it: rlk_ + 16 hex + _ + base64url of 32 bytes. */
export const newApiKey = () => `rlk_${hex(8)}_${randomBytes(32).toString('base64url')}`;

/** One reviewer's answer, and when (sandbox time) it arrives. */
export interface Answer {
  at: number;
  choice: 'positive' | 'negative';
}

/** The workspace's fixed setup: one approved agent integration bound to one private-invited request profile. */
export interface WorkspaceFixture {
  integrationId: string;
  agentId: string;
  agentVersionId: string;
  policyId: string;
  publishingPolicyId: string;
  bindingId: string;
  cohortId: string;
  privateGroupId: string;
  workflowKey: string;
  profile: { id: string; version: number; hash: string; criterion: string };
  bindingHash: string;
  audiencePolicyHash: string;
  selectionPolicyHash: string;
}

export function workspaceFixture(): WorkspaceFixture {
  const ids = {
    integrationId: `agi_${hex(16)}`,
    agentId: `agt_${hex(16)}`,
    agentVersionId: `agtv_${hex(16)}`,
    policyId: `arp_${hex(16)}`,
    publishingPolicyId: `agpol_${hex(16)}`,
    bindingId: `hrb_${hex(16)}`,
    cohortId: `hacoh_${hex(16)}`,
    privateGroupId: `hapg_${hex(16)}`,
    workflowKey: 'support-reply',
  };
  const profileId = `rrp_${hex(16)}`;
  const criterion = 'Is this output correct and safe to use';
  const profile = {
    id: profileId,
    version: 1,
    hash: commit({
      profileId,
      version: 1,
      criterion,
      audience: 'private_invited',
      panelSize: PANEL_SIZE,
      responseWindowSeconds: RESPONSE_WINDOW_SECONDS,
    }),
    criterion,
  };
  return {
    ...ids,
    profile,
    bindingHash: commit({ bindingId: ids.bindingId, profile: profile.hash, cohort: ids.cohortId }),
    audiencePolicyHash: commit({ reviewerSource: 'customer_invited', privateGroup: ids.privateGroupId }),
    selectionPolicyHash: commit({ policyId: ids.policyId, mode: 'always' }),
  };
}

/** The workspace's one project, held by the integration's key. */
export function sandboxProject(projectId: string, holder: string, t: number) {
  return {
    projectId,
    name: 'Sandbox review project',
    description: 'Invited review in the local sandbox.',
    dataClassification: 'confidential',
    retentionDays: 90,
    createdAt: t,
    updatedAt: t,
    holders: new Set([holder]),
  };
}

/** rateloop_get_agent_context's document for a credential with these scopes. */
export function agentContextDoc(f: WorkspaceFixture, workspaceId: string, scopes: Set<Scope>): Obj {
  return {
    schemaVersion: 'rateloop.agent-context.v2',
    integrationId: f.integrationId,
    workspaceId,
    agentId: f.agentId,
    agentVersionId: f.agentVersionId,
    status: 'active',
    enforcementMode: 'advisory',
    enforcementBoundary: 'advisory',
    reportedLane: null,
    allowedWorkflowKeys: [f.workflowKey],
    reviewPolicy: { policyId: f.policyId, version: 1, audiencePolicyHash: f.audiencePolicyHash },
    publishingPolicy: { policyId: f.publishingPolicyId, version: 1 },
    humanReview: {
      status: 'configured',
      binding: { bindingId: f.bindingId, version: 1, hash: f.bindingHash },
      selection: {
        policyId: f.policyId,
        version: 1,
        frequency: { mode: 'always', fixedRateBps: null, agreementThresholdBps: 7000, productionFloorBps: 1000, maximumUnreviewedGap: 20 },
        rules: { requiredRiskTiers: [], criticalRiskTiers: ['critical'], minimumConfidenceBps: 7000, maximumLatencyMs: 120000 },
        audiencePolicyHash: f.audiencePolicyHash,
        enforcementMode: 'advisory',
      },
      requestProfile: {
        profileId: f.profile.id,
        version: f.profile.version,
        hash: f.profile.hash,
        status: 'ready',
        questionAuthority: 'owner_fixed',
        resultSemantics: 'assurance',
        criterion: f.profile.criterion,
        labels: { positive: 'Approve', negative: 'Reject' },
        rationaleMode: 'optional',
        audience: {
          type: 'private_invited',
          contentBoundary: 'private_workspace',
          privateSensitivity: 'confidential',
          privateGroup: f.privateGroupId,
          requiredExpertiseKeys: [],
          expertiseRequirements: [],
        },
        responseWindowSeconds: RESPONSE_WINDOW_SECONDS,
        panelSize: PANEL_SIZE,
        compensation: { mode: 'unpaid', bountyPerSeatAtomic: null },
        feedbackBonus: {
          enabled: false,
          poolAtomic: null,
          awarderKind: 'requester',
          awarderAccount: null,
          awardWindowSeconds: null,
          agentMayAward: false,
        },
      },
      authority: 'ask_automatically',
      blockingReason: null,
    },
    publishingGrant: {
      active: true,
      reason: 'active',
      configuredPolicy: { policyId: f.publishingPolicyId, version: 1 },
      integrationPolicy: { policyId: f.publishingPolicyId, version: 1 },
      activationMode: 'owner_grant',
      exactBinding: true,
      policyActive: true,
      grantedScopes: ['panel:publish'],
      credentialScopes: [...scopes].sort(),
      allowedWorkflowKeys: [f.workflowKey],
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
      effectiveLane: {
        available: true,
        code: 'private_invited_unpaid_lane_ready',
        lane: 'private_invited_unpaid',
        message: 'Invited reviewers of the bound cohort review each requested output.',
      },
    },
    safeAccess: {
      canCheckReviewRequirement: true,
      canSpend: false,
      canPublish: true,
      canReadPrivateArtifacts: false,
      canAdministerWorkspace: false,
    },
  };
}

/** The models behind an execution (its primary span and every contributor). */
export function executionProfileDoc(exec: Obj): Obj {
  const primary = (exec.generationSpans as Obj[]).find((s) => s.role === 'primary')!;
  const model = (s: Obj) => ({
    provider: s.provider,
    requestedModel: s.requestedModel,
    resolvedModel: s.resolvedModel ?? null,
    modelVersion: s.modelVersion ?? null,
    reasoningEffort: s.reasoningEffort ?? null,
    serviceTier: s.serviceTier ?? null,
  });
  return {
    schemaVersion: 'rateloop.execution-profile.v2',
    orchestrationMode: exec.generationSpans.length > 1 ? 'multi_model' : 'single_model',
    primary: model(primary),
    contributors: (exec.generationSpans as Obj[]).map(model),
  };
}

/** The execution manifest of what the agent reported: each span with nulls for what it left out, and the totals. */
export function executionManifestDoc(exec: Obj, spans: Obj[]): Obj {
  const spansOut = spans.map((s) => ({
    spanId: s.spanId,
    parentSpanId: s.parentSpanId ?? null,
    role: s.role,
    provider: s.provider,
    requestedModel: s.requestedModel,
    resolvedModel: s.resolvedModel ?? null,
    modelVersion: s.modelVersion ?? null,
    reasoningEffort: s.reasoningEffort ?? null,
    serviceTier: s.serviceTier ?? null,
    startedAt: s.startedAt ?? null,
    completedAt: s.completedAt ?? null,
    durationMs: s.startedAt && s.completedAt ? Date.parse(s.completedAt) - Date.parse(s.startedAt) : null,
    timeToFirstOutputMs: s.timeToFirstOutputMs ?? null,
    inputTokens: s.inputTokens ?? null,
    cachedInputTokens: s.cachedInputTokens ?? null,
    outputTokens: s.outputTokens ?? null,
    reasoningOutputTokens: s.reasoningOutputTokens ?? null,
    responseIdHash: s.responseIdHash ?? null,
    finishReason: s.finishReason ?? null,
  }));
  const sum = (k: string) => (spansOut.some((s: Obj) => s[k] !== null) ? spansOut.reduce((a: number, s: Obj) => a + (s[k] ?? 0), 0) : null);
  return {
    schemaVersion: 'rateloop.execution-manifest.v1',
    externalExecutionId: exec.externalExecutionId,
    status: exec.status,
    startedAt: exec.startedAt ?? null,
    completedAt: exec.completedAt ?? null,
    durationMs: exec.startedAt && exec.completedAt ? Date.parse(exec.completedAt) - Date.parse(exec.startedAt) : null,
    toolCallCount: exec.toolCallCount ?? null,
    toolDurationMs: exec.toolDurationMs ?? null,
    primarySpanId: exec.primarySpanId,
    generationSpans: spansOut,
    totals: {
      generationSpanCount: spansOut.length,
      generationDurationMs: sum('durationMs'),
      toolCallCount: exec.toolCallCount ?? null,
      toolDurationMs: exec.toolDurationMs ?? null,
      inputTokens: sum('inputTokens'),
      cachedInputTokens: sum('cachedInputTokens'),
      outputTokens: sum('outputTokens'),
      reasoningOutputTokens: sum('reasoningOutputTokens'),
      totalTokens: sum('inputTokens') === null ? null : (sum('inputTokens') ?? 0) + (sum('outputTokens') ?? 0),
    },
  };
}

/** A new private review (review.md §6.4) of the source and suggestion with these content types and commitments. */
export function privateReviewDoc(f: WorkspaceFixture, projectId: string, contentTypes: string[], commitments: string[], t: number): Obj {
  const privateReviewId = `hpr_${hex(16)}`;
  return {
    schemaVersion: 'rateloop.human-assurance.v2',
    privateReviewId,
    status: 'ready_for_assignment',
    lane: 'private',
    task: { kind: 'binary_review', commitment: commit({ privateReviewId, commitments, contentTypes }) },
    bindings: {
      bindingHash: f.bindingHash,
      project: { projectId, hash: commit({ projectId }) },
      requestProfile: { id: f.profile.id, version: f.profile.version, hash: f.profile.hash },
      privateGroup: {
        groupId: f.privateGroupId,
        policyVersion: 1,
        policyHash: commit({ group: f.privateGroupId }),
        allowlistHash: commit({ projects: [projectId] }),
        allowlistStatus: 'allowed',
      },
      cohort: { cohortId: f.cohortId, hash: commit({ cohort: f.cohortId }) },
    },
    artifacts: { sourceArtifactId: `art_${hex(16)}`, suggestionArtifactId: `art_${hex(16)}` },
    responseWindowSeconds: RESPONSE_WINDOW_SECONDS,
    responseDeadline: iso(t + RESPONSE_WINDOW_SECONDS),
  };
}

/** What the three invited reviewers of a review assigned at `t` answer, and when, for the chosen outcome. */
export function reviewerAnswers(outcome: ReviewOutcome, t: number): Answer[] {
  const plans: Record<ReviewOutcome, Answer[]> = {
    approved: [60, 120, 180].map((s) => ({ at: t + s, choice: 'positive' })),
    rejected: [60, 120, 180].map((s) => ({ at: t + s, choice: 'negative' })),
    inconclusive: [
      { at: t + 60, choice: 'positive' },
      { at: t + 120, choice: 'negative' },
    ],
    failed: [],
  };
  return plans[outcome];
}

/** The panel's seats on a delivery: one reserved assignment per invited reviewer until the deadline. */
export function reviewerAssignments(deliveryId: string, deadline: number): Obj[] {
  return [0, 1, 2].map((i) => ({
    assignmentId: `hpua_${sha(`${deliveryId}:${i}`).slice(0, 40)}`,
    reviewerAccountAddress: `0x${sha(`reviewer:${i}`).slice(0, 40)}`,
    reservationExpiresAt: iso(deadline),
    status: 'reserved',
  }));
}

/** The evaluation the seed-only generation route files for a generated draft (one sandbox model span). */
export function draftEvaluationArgs(f: WorkspaceFixture, key: string, source: string, draft: string): Obj {
  return {
    externalOpportunityId: `generation:${sha(key).slice(0, 32)}`,
    workflowKey: f.workflowKey,
    riskTier: 'low',
    audiencePolicyHash: f.audiencePolicyHash,
    suggestionCommitment: commit(draft),
    sourceEvidence: { reference: `generation/${sha(key).slice(0, 16)}`, hash: commit(source) },
    declaredConfidenceBps: null,
    criticalRisk: false,
    metadataComplete: true,
    execution: {
      externalExecutionId: `generation:${sha(key).slice(0, 32)}`,
      status: 'completed',
      startedAt: null,
      completedAt: null,
      toolCallCount: null,
      toolDurationMs: null,
      primarySpanId: 'primary',
      generationSpans: [{ spanId: 'primary', parentSpanId: null, role: 'primary', provider: 'sandbox', requestedModel: 'sandbox-draft-1' }],
    },
  };
}
