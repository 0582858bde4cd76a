// The evidence side of the sandbox (evidence.md): runs from settled rounds become v4 packets signed with the
// sandbox's own Ed25519 key; a retired key stays listed; every service action is appended to a workspace audit
// chain; a coverage export is digested per the spec. Routes under /api/account authenticate the browser session
// cookie and nothing else, as the service does (review.md §2.5, §7.2): an API key there is not looked at, so a
// request that carries only one is 401 authentication_required.
import { createHash, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { canonicalJson } from '../../protocol/canonical.js';
import { auditEventDigest, GENESIS_DIGEST } from '../../evidence/audit.js';
import { coverageDigest, COVERAGE_SCHEMA } from '../../evidence/coverage.js';
import { b64url, keyIdOf } from '../../evidence/keys.js';
import { evidenceMerkleRoot, recomputeAggregation, sha256EvidenceValue, SCHEMAS } from '../../evidence/packet.js';
import { ApiError } from './envelope.js';
import { SESSION_COOKIE_NAME } from '../../evidence/session-cookie.js';
import type { Hostile, HostileScenario } from './hostile.js';

export const EVIDENCE_SCENARIOS: HostileScenario[] = [
  {
    name: 'evidence_other_run',
    flow: 'evidence',
    description: 'the run evidence route answers with the (validly signed) packet of another run',
  },
];

interface SigningKey {
  keyId: string;
  spki: string;
  x: string;
  privateKey: KeyObject;
  status: 'current' | 'retired';
  createdAt: string;
}

function newKey(status: SigningKey['status']): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { keyId: keyIdOf(der), spki: b64url(der), x: b64url(der.subarray(12)), privateKey, status, createdAt: new Date().toISOString() };
}

/** The sandbox workspace, in the service's form (ws_ + 32 hex): ids loopsign prints in `next` are checked for it. */
export const SANDBOX_WORKSPACE_ID = 'ws_5a4db0c3e0f24c6b9d17a2e8f3b61c90';

export interface RunSource {
  runId: string;
  contentId: string;
  title: string;
  up: number;
  down: number;
  settledAt: string;
}

type Obj = Record<string, any>;

/** A run from before the key rotation: its packet is signed with the retired key, which must still verify. */
export const ARCHIVED_RUN: RunSource = {
  runId: 'run_archived_example',
  contentId: '0',
  title: 'Archived example run',
  up: 3,
  down: 1,
  settledAt: '2026-01-01T00:00:00.000Z',
};

export class SandboxEvidence {
  readonly workspaceId = SANDBOX_WORKSPACE_ID;
  readonly current = newKey('current');
  readonly retired = newKey('retired');
  private readonly events: Obj[] = [];
  private readonly packets = new Map<string, Obj>();

  constructor(
    /** The value of the signed-in owner's session cookie. */
    readonly sessionCookie: string,
    private readonly runs: () => Promise<RunSource[]>,
    private readonly hostile: Hostile,
  ) {
    hostile.register(EVIDENCE_SCENARIOS);
  }

  /** Append one action to the workspace audit chain. */
  audit(action: string, targetKind: string, targetId: string, metadata: Obj = {}, actorReference = 'public_wallet'): void {
    const previous = this.events.length ? this.events[this.events.length - 1]!.event_digest : GENESIS_DIGEST;
    const event: Obj = {
      event_id: `evt_${createHash('sha256').update(`${this.events.length}:${action}:${targetId}:${Date.now()}`).digest('hex').slice(0, 24)}`,
      workspace_id: this.workspaceId,
      sequence: this.events.length + 1,
      previous_digest: previous,
      home_region: 'local',
      actor_kind: 'agent',
      actor_reference: actorReference,
      assurance_method: 'sandbox',
      action,
      target_kind: targetKind,
      target_id: targetId,
      purpose: 'paid_feedback',
      // A string: a null reason is hashed as null by the server and as "null" by the service's offline checker, so
      // verify-evidence refuses it (docs/evidence.md, "Deliberate refusals"); the sandbox's chains verify.
      reason: 'sandbox_action',
      request_correlation: null,
      result: 'success',
      metadata_json: JSON.stringify(metadata),
      occurred_at: new Date().toISOString(),
    };
    event.event_digest = auditEventDigest(previous, event);
    this.events.push(event);
  }

  auditExport(): Obj {
    const head = this.events.length ? this.events[this.events.length - 1]!.event_digest : GENESIS_DIGEST;
    return {
      exportedAt: new Date().toISOString(),
      format: 'rateloop-audit-v1',
      integrity: { eventCount: this.events.length, headDigest: head, valid: true },
      events: this.events,
      retention: {
        policyVersion: 'sandbox-1',
        auditRetentionMonths: 6,
        minimumRetentionMonths: 6,
        basis: 'sandbox',
        effectiveAt: new Date(0).toISOString(),
      },
      workspaceId: this.workspaceId,
    };
  }

  private listed(k: SigningKey): Obj {
    // The current key also signs review-gate evidence (review.md §5.6.2); the service lists one key with both uses.
    const uses = k.status === 'current' ? ['human_review_gate', 'decision_packet'] : ['decision_packet'];
    return {
      algorithm: 'Ed25519',
      keyId: k.keyId,
      publicKeyJwk: { kty: 'OKP', crv: 'Ed25519', x: k.x },
      publicKeySpki: k.spki,
      status: k.status,
      uses,
    };
  }

  trustedKeys(): Obj {
    return { schemaVersion: 'rateloop.evidence-public-trusted-keys.v1', keys: [this.listed(this.current), this.listed(this.retired)] };
  }

  keyHistory(): Obj {
    return {
      schemaVersion: 'rateloop.evidence-trusted-key-history.v1',
      workspaceId: this.workspaceId,
      keys: [this.current, this.retired].map((k) => ({
        ...this.listed(k),
        firstPacketAt: null,
        lastPacketAt: null,
        packetCount: [...this.packets.values()].filter((p) => p.signing.keyId === k.keyId).length,
      })),
      untrustedPacketKeyCount: 0,
    };
  }

  /** A v4 packet for a run: one case (the question), its raters as the responses, signed with `key`. */
  buildPacket(run: RunSource, key: SigningKey = this.current): Obj {
    const valid = run.up + run.down;
    const passRule = { metric: 'candidate_preference_share_bps', operator: 'gte', thresholdBps: 6000, minimumValidResponses: 2 };
    const policy = {
      schemaVersion: 'human-assurance-v1',
      policyId: 'policy_sandbox_raters',
      version: 1,
      reviewerSource: 'rateloop_network',
      compensation: { mode: 'bounty' },
      selection: { mode: 'manual' },
      fallbacks: { allowed: false, sources: [] },
      requiredQualifications: [],
      assurance: { requirements: [] },
      buyerPrivacy: { visibleFields: [], minimumAggregationSize: 2, suppressSmallCells: true },
      legalEligibilityRequired: false,
    };
    const policyHash = sha256EvidenceValue(policy, 'locale-en-US');
    const suiteManifest = {
      kind: 'suite_manifest',
      projectId: 'project_sandbox',
      suiteId: `suite_${run.runId}`,
      version: 1,
      rubric: { prompt: run.title, failureTags: [], rationale: { mode: 'none' }, passRule },
      cases: [{ caseId: `case_${run.contentId}` }],
    };
    const suiteManifestHash = sha256EvidenceValue(suiteManifest, 'locale-en-US');
    const admissionPolicyHash = `0x${createHash('sha256').update(`admission:${policyHash}`).digest('hex')}`;
    const runManifest = {
      schemaVersion: 'human-assurance-run-orchestration-v1',
      kind: 'run_orchestration_manifest',
      runId: run.runId,
      projectId: 'project_sandbox',
      suite: { suiteId: suiteManifest.suiteId, version: 1, manifestHash: suiteManifestHash },
      rubric: { rubricId: `rubric_${run.runId}`, version: 1, passRule },
      audiencePolicy: { policyId: policy.policyId, version: 1, manifestHash: policyHash, admissionPolicyHash },
    };
    const runManifestHash = sha256EvidenceValue(runManifest, 'locale-en-US');
    const admissionPolicies = [
      { admissionPolicyHash, derivedFrom: { kind: 'assurance_audience_policy', id: policy.policyId, version: 1, hash: policyHash } },
    ];
    const caseLeaf = sha256EvidenceValue({
      admissionPolicyHash,
      caseId: `case_${run.contentId}`,
      contentId: run.contentId,
      deterministicChecksHash: null,
      deterministicChecksStatus: 'not_applicable',
      position: 0,
      roundId: '1',
      roundStatus: 'settled',
    });
    const responseLeaves = Array.from({ length: valid }, (_, i) =>
      sha256EvidenceValue({
        caseId: `case_${run.contentId}`,
        choice: i < run.up ? 'candidate' : 'baseline',
        failureTagKeys: [],
        qualificationKeys: [],
        responseDigest: `sha256:${createHash('sha256').update(`${run.runId}:${i}`).digest('hex')}`,
        reviewerSource: 'rateloop_network',
        settlementReference: null,
        validity: 'valid',
      }),
    ).sort();
    const counts = {
      targetReviewerCount: valid,
      assignedReviewerCount: valid,
      validReviewerCount: valid,
      invalidJudgmentCount: 0,
      pendingJudgmentCount: 0,
    };
    const prefs = valid >= 2 ? { candidate: run.up, baseline: run.down, tie: 0 } : {};
    const recomputation = {
      caseLeaves: [caseLeaf],
      responseLeaves,
      reviewerSources: [
        {
          source: 'rateloop_network',
          targetReviewerCount: valid,
          assignedReviewerCount: valid,
          paidReviewerCount: valid,
          respondingReviewerCount: valid,
          completeJudgmentSetReviewerCount: valid,
        },
      ],
      cases: [
        {
          caseId: `case_${run.contentId}`,
          overall: { ...counts, ...prefs },
          sourceCounts: [{ source: 'rateloop_network', ...counts, ...prefs }],
        },
      ],
    };
    const payload = {
      schemaVersion: SCHEMAS.v4,
      packetId: `haep_${createHash('sha256').update(run.runId).digest('hex').slice(0, 32)}`,
      runId: run.runId,
      tenantCommitment: `hmac-sha256:${createHash('sha256').update(`tenant:${this.workspaceId}`).digest('hex')}`,
      generatedAt: run.settledAt,
      privacy: {
        classification: 'internal',
        minimumAggregationSize: 2,
        reviewerIdentitiesIncluded: false,
        rawRationaleIncluded: false,
        calibrationItemsIncludedInVerdict: false,
      },
      frozen: {
        runManifestHash,
        runManifest,
        suiteManifestHash,
        suiteManifest,
        policyHash,
        policy,
        admissionPolicyHashes: [admissionPolicyHash],
        admissionPolicies,
      },
      reviewContext: {
        selectionTrigger: {
          kind: 'owner_required',
          source: 'explicit_workspace_assurance_run',
          reasonCodes: ['explicit_workspace_assurance_run'],
        },
        deliveryAuthority: { mode: 'workspace_authorized_member', callerSupplied: false },
        gate: {
          type: 'not_applicable',
          policyReference: null,
          stopGateEvidenceReference: null,
          statement: 'Sandbox run from a settled question.',
        },
        versions: {
          runManifest: { hash: runManifestHash },
          suite: { id: suiteManifest.suiteId, version: 1, hash: suiteManifestHash },
          audiencePolicy: { id: policy.policyId, version: 1, hash: policyHash },
          admissionPolicies,
          selectionPolicy: null,
          requestProfile: null,
        },
        reviewerQualifications: {
          taxonomy: 'explicit_qualification_categories',
          orderedTiers: false,
          minimumAggregationSize: 2,
          categories: [],
          unqualified: { suppressed: false, reviewerCount: valid },
        },
        period: {
          startInclusive: run.settledAt,
          endInclusive: run.settledAt,
          durationMs: 0,
          coverage: {
            caseCount: 1,
            targetExpectedJudgmentCount: valid,
            submittedJudgmentCount: valid,
            respondingReviewerCount: valid,
            targetReviewerCount: valid,
          },
          responseSubmissionLatencyFromPeriodStartMs: { count: valid, minimum: 0, median: 0, p95: 0, maximum: 0 },
        },
      },
      roots: { caseRoot: evidenceMerkleRoot([caseLeaf]), responseRoot: evidenceMerkleRoot(responseLeaves) },
      aggregation: recomputeAggregation(recomputation, 2, passRule),
      calibration: { itemCount: 0, statusDisclosedOnlyInAggregate: true },
      overrideDecisions: { atGeneration: { go: 0, revise: 0, stop: 0, total: 0 }, recordedSeparately: true },
      failureTagCounts: [],
      rationaleDigests: [],
      settlement: { mode: 'onchain_round_settlement', statement: 'Settled on the sandbox chain.', links: [] },
      chainEvidence: [
        {
          caseId: `case_${run.contentId}`,
          contentId: run.contentId,
          admissionPolicyHash,
          roundId: '1',
          roundStatus: 'settled',
          execution: 'sandbox',
          indexedEvents: [],
        },
      ],
      limitations: [{ code: 'descriptive_case_results', message: 'Descriptive per-case results from a sandbox round.' }],
      recomputation,
    };
    const signing = { algorithm: 'Ed25519', keyId: key.keyId, publicKey: key.spki };
    const signed = { payload, signing };
    return {
      payload,
      signing,
      packetDigest: sha256EvidenceValue(signed),
      signature: b64url(cryptoSign(null, Buffer.from(canonicalJson(signed), 'utf8'), key.privateKey)),
    };
  }

  /** Runs with packets: every settled question, plus an archived run signed with the retired key. */
  async allRuns(): Promise<RunSource[]> {
    return [ARCHIVED_RUN, ...(await this.runs())];
  }

  async packet(runId: string): Promise<Obj> {
    const existing = this.packets.get(runId);
    if (existing) return existing;
    const run = (await this.allRuns()).find((r) => r.runId === runId);
    if (!run) throw new ApiError(404, 'assurance_evidence_not_found', 'Evidence packet not found.', null);
    const packet = this.buildPacket(run, run === ARCHIVED_RUN ? this.retired : this.current);
    this.packets.set(runId, packet);
    return packet;
  }

  async coverage(from?: string, to?: string): Promise<Obj> {
    const runs = await this.allRuns();
    const body: Obj = {
      schemaVersion: COVERAGE_SCHEMA,
      workspaceId: this.workspaceId,
      exportedAt: new Date().toISOString(),
      boundaries: {
        startInclusive: from ?? new Date(Date.now() - 30 * 86400_000).toISOString(),
        endExclusive: to ?? new Date().toISOString(),
        snapshotAt: new Date().toISOString(),
      },
      retention: {
        schemaVersion: 'rateloop.workspace-evidence-retention.v1',
        policyVersion: 'sandbox-1',
        evidenceRetentionMonths: 6,
        auditRetentionMonths: 6,
        minimumRetentionMonths: 6,
        basis: 'sandbox',
        effectiveAt: new Date(0).toISOString(),
      },
      limits: { maximumWindowDays: 366, maximumScopes: 500, maximumRowsPerSeries: 5000 },
      counts: { scopes: 1, decisions: runs.length, observations: runs.length, rollups: 0, stageTransitions: 0 },
      oversightDesignations: [],
      overrideDecisions: { decided: 0, byOutcome: { accepted: 0, disregarded: 0, overridden: 0, reversed: 0 }, overrideRateBps: 0 },
      trainingRecords: { schemaVersion: 'rateloop.training-records.v1' },
      scopes: [
        {
          scopeId: 'scope_sandbox',
          agentId: 'sandbox_agent',
          workflowKey: 'paid_feedback',
          observations: runs.map((r) => ({
            observationId: `obs_${r.runId}`,
            runId: r.runId,
            agreement: r.up >= r.down,
            respondingHumanCount: r.up + r.down,
            finalizedAt: r.settledAt,
          })),
        },
      ],
    };
    body.exportDigest = coverageDigest(body);
    return body;
  }

  routes(): Hono {
    const app = new Hono();
    const tokenless = (c: Context, e: ApiError) => c.json({ code: e.code, message: e.message, retryable: e.retryable }, e.status as never);
    app.get('/api/evidence/trusted-keys', (c) => {
      c.header('Cache-Control', 'public, max-age=300, stale-while-revalidate=3600');
      c.header('X-Content-Type-Options', 'nosniff');
      return c.json(this.trustedKeys());
    });
    app.use('/api/account/*', async (c, next) => {
      // requireBrowserSession: only the session cookie is read; Authorization is ignored.
      if (getCookie(c, SESSION_COOKIE_NAME) !== this.sessionCookie)
        return tokenless(c, new ApiError(401, 'authentication_required', 'Authentication is required.', null));
      const ws = c.req.path.split('/')[4];
      if (ws !== this.workspaceId) return tokenless(c, new ApiError(404, 'workspace_not_found', 'Workspace not found.', null));
      c.header('Cache-Control', 'private, no-store');
      await next();
    });
    const ws = '/api/account/workspaces/:ws';
    app.get(`${ws}/assurance/trusted-keys`, (c) => {
      const q = c.req.queries();
      if (Object.keys(q).length === 0) return c.json(this.keyHistory());
      const keyId = c.req.query('keyId');
      if (c.req.query('format') !== 'spki' || !keyId || Object.keys(q).some((k) => k !== 'format' && k !== 'keyId')) {
        return tokenless(c, new ApiError(400, 'trusted_evidence_key_download_invalid', 'Use format=spki&keyId=ed25519:<id>.', null));
      }
      const k = [this.current, this.retired].find((x) => x.keyId === keyId);
      if (!k) return tokenless(c, new ApiError(404, 'trusted_evidence_key_not_found', 'Trusted evidence key not found.', null));
      return new Response(`${k.spki}\n`, {
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          'content-disposition': `attachment; filename="rateloop-evidence-${k.keyId.replace(/[^A-Za-z0-9._-]/g, '-')}.spki.txt"`,
          'x-rateloop-evidence-key-id': k.keyId,
        },
      });
    });
    const evidence = async (c: Context, create: boolean) => {
      try {
        const runId = c.req.param('runId')!;
        let packet = await this.packet(runId);
        if (this.hostile.take('evidence_other_run')) {
          const other = (await this.allRuns()).find((r) => r.runId !== runId)!;
          packet = await this.packet(other.runId);
        }
        if (create) this.audit('assurance.evidence_created', 'run', runId);
        return c.json(packet, create ? 201 : 200);
      } catch (error) {
        return tokenless(c, error instanceof ApiError ? error : new ApiError(500, 'internal_error', 'Tokenless API request failed.', null));
      }
    };
    app.get(`${ws}/assurance/runs/:runId/evidence`, (c) => evidence(c, false));
    app.post(`${ws}/assurance/runs/:runId/evidence`, (c) => evidence(c, true));
    app.get(`${ws}/audit/export`, (c) => {
      c.header('content-disposition', 'attachment; filename="rateloop-audit.json"');
      return c.json(this.auditExport());
    });
    app.get(`${ws}/assurance/coverage/export`, async (c) => {
      const extra = Object.keys(c.req.queries()).filter((k) => k !== 'from' && k !== 'to');
      const from = c.req.query('from');
      const to = c.req.query('to');
      if (extra.length || (from && Number.isNaN(Date.parse(from))) || (to && Number.isNaN(Date.parse(to)))) {
        return tokenless(c, new ApiError(400, 'invalid_coverage_export_window', 'Use only from and to, as ISO timestamps.', null));
      }
      const body = await this.coverage(from, to);
      this.audit('assurance.coverage_export', 'workspace', this.workspaceId, { exportDigest: body.exportDigest });
      return c.json(body);
    });
    return app;
  }
}
