// Offline verification of a run evidence packet (evidence.md §2–8). Steps run in the spec's order and collect
// the spec's error codes — the same codes, for the same packets, as the service's own verifier (the live corpus,
// test/corpus-evidence.test.ts); every check is also reported with what was expected and what was found. Only the
// key the user pinned is trusted: a packet is valid only when its key equals the pin (or derives the given id).
import { createHash, verify as cryptoVerify } from 'node:crypto';
import { canonicalJson, type KeyOrder } from '../protocol/canonical.js';
import { isDoc, type ServiceDoc } from '../service/doc.js';
import { KEY_ID, fromB64url, keyIdOf, keyIdOfPin, publicKeyObject } from './keys.js';
import { loneSurrogateAt, recomputationProblem, reviewContextHashProblem, signingProblem, type Refusal } from './strict.js';

/** What the signature covers, for the strict reading (the same object the digest step builds). */
const signed0 = (payload: unknown, signing: unknown) => ({ payload, signing });

export const SCHEMAS = {
  v4: 'rateloop.human-assurance.evidence.v4',
  v3: 'rateloop.human-assurance.evidence.v3',
  v2: 'rateloop.human-assurance.evidence.v2',
};

export interface Check {
  id: string;
  label: string;
  status: 'pass' | 'fail' | 'skipped' | 'info';
  expected?: unknown;
  actual?: unknown;
  detail?: string;
}

export interface PacketResult {
  valid: boolean;
  errors: string[];
  packetDigest?: string;
  checks: Check[];
}

export interface TrustAnchor {
  publicKey?: string; // base64url SPKI
  keyId?: string;
  /** Whose key id the checks name: "given" (--key-id), "pin's" (derived from --public-key), "trusted key's" (--trusted-keys). */
  anchorName?: string;
}

// Every field of a packet is unknown until a check below has shown what it is (src/service/doc.ts).
type Obj = ServiceDoc;
const isObj = isDoc;
/** Array.isArray, but its items stay unknown (Array.isArray would make them any). */
const isList = (v: unknown): v is readonly unknown[] => Array.isArray(v);
const oneOf = (list: readonly unknown[], value: unknown): boolean => list.includes(value);
/** What `value?.[0]` reads: an array's first item, a string's first character, an object's "0" key. */
const firstOf = (value: unknown): unknown => (value === null || value === undefined ? undefined : (value as { 0?: unknown })[0]);

export function sha256EvidenceValue(value: unknown, order: KeyOrder = 'code-unit'): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value, order), 'utf8').digest('hex')}`;
}

/** evidence.md §4: sorted leaves, pairwise sha256EvidenceValue([l, r]), odd last paired with itself. */
export function evidenceMerkleRoot(leaves: readonly string[]): string {
  if (leaves.length === 0) return sha256EvidenceValue([]);
  let level = [...leaves].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  while (level.length > 1) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256EvidenceValue([level[i]!, level[i + 1] ?? level[i]!]));
    level = next;
  }
  return level[0]!;
}

function count(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new Error(`${what} must be a non-negative safe integer`);
  return v;
}

const CELL_COUNTS = [
  'targetReviewerCount',
  'assignedReviewerCount',
  'validReviewerCount',
  'invalidJudgmentCount',
  'pendingJudgmentCount',
] as const;
const SOURCE_COUNTS = [
  'targetReviewerCount',
  'assignedReviewerCount',
  'paidReviewerCount',
  'respondingReviewerCount',
  'completeJudgmentSetReviewerCount',
] as const;

// The real verifier requires the three choice counts on every cell that is not suppressed, copies the pass
// rule's minimum as it is (no check of its own), and names a source only when it has one.
interface PassRule extends Obj {
  readonly minimumValidResponses: number;
  readonly thresholdBps: number;
}

/** The pass rule is copied as it is, but what it is compared with must be a number (null >= 0 would pass). */
function passRuleOf(v: unknown): PassRule {
  if (!isObj(v)) throw new Error('aggregation.passRule must be an object');
  const { minimumValidResponses, thresholdBps } = v;
  if (!Number.isSafeInteger(minimumValidResponses) || !Number.isSafeInteger(thresholdBps))
    throw new Error('passRule.minimumValidResponses and passRule.thresholdBps must be safe integers');
  return v as PassRule;
}

interface Cell {
  source?: unknown;
  targetReviewerCount: number;
  assignedReviewerCount: number;
  submittedJudgmentCount: number;
  validReviewerCount: number;
  invalidJudgmentCount: number;
  pendingJudgmentCount: number;
  missingTargetJudgmentCount: number;
  missingAssignedJudgmentCount: number;
  suppressed: boolean;
  quorum: { requiredValidReviewers: number; met: boolean };
  preference: { candidate: number; baseline: number; tie: number; candidateShareBps: number; method: string } | null;
  disagreement: { nonCandidateCount: number; rateBps: number; method: string } | null;
  outcome: 'pass' | 'fail' | 'insufficient';
}

function cell(input: unknown, minimum: number, passRule: PassRule): Cell {
  if (!isObj(input)) throw new Error('a case count cell must be an object');
  const [target, assigned, valid, invalid, pending] = CELL_COUNTS.map((k) => count(input[k], k)) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const submitted = valid + invalid + pending;
  const suppressed = valid < minimum;
  let preference: Cell['preference'] = null;
  let disagreement: Cell['disagreement'] = null;
  if (suppressed) {
    if (input.candidate !== undefined || input.baseline !== undefined || input.tie !== undefined)
      throw new Error('suppressed cells must not carry preferences');
  } else {
    const candidate = count(input.candidate, 'candidate');
    const baseline = count(input.baseline, 'baseline');
    const tie = count(input.tie, 'tie');
    if (candidate + baseline + tie !== valid) throw new Error('candidate + baseline + tie must equal validReviewerCount');
    preference = { candidate, baseline, tie, candidateShareBps: Math.round((candidate * 10000) / valid), method: 'descriptive_case_share' };
    disagreement = {
      nonCandidateCount: baseline + tie,
      rateBps: Math.round(((baseline + tie) * 10000) / valid),
      method: 'descriptive_case_share',
    };
  }
  const required = passRule.minimumValidResponses;
  const quorum = { requiredValidReviewers: required, met: valid >= required };
  const outcome =
    suppressed || !quorum.met || !preference ? 'insufficient' : preference.candidateShareBps >= passRule.thresholdBps ? 'pass' : 'fail';
  return {
    ...(input.source ? { source: input.source } : {}),
    targetReviewerCount: target,
    assignedReviewerCount: assigned,
    submittedJudgmentCount: submitted,
    validReviewerCount: valid,
    invalidJudgmentCount: invalid,
    pendingJudgmentCount: pending,
    missingTargetJudgmentCount: Math.max(0, target - submitted),
    missingAssignedJudgmentCount: Math.max(0, assigned - submitted),
    suppressed,
    quorum,
    preference,
    disagreement,
    outcome,
  };
}

/** evidence.md §6: the aggregation recomputed from the packet's recomputation inputs. */
export function recomputeAggregation(recomputation: Obj, minimum: unknown, rule: unknown): Record<string, unknown> {
  const passRule = passRuleOf(rule);
  if (typeof minimum !== 'number' || !Number.isSafeInteger(minimum) || minimum < 1)
    throw new Error('minimumAggregationSize must be a positive integer');
  if (!isList(recomputation.reviewerSources) || !isList(recomputation.cases)) throw new Error('reviewerSources and cases must be arrays');
  const sources = recomputation.reviewerSources.map((x) => {
    if (!isObj(x)) throw new Error('a reviewer source must be an object');
    return x;
  });
  const totals = Object.fromEntries(SOURCE_COUNTS.map((k) => [k, sources.reduce((s, x) => s + count(x[k], k), 0)])) as Record<
    (typeof SOURCE_COUNTS)[number],
    number
  >;
  const coverage = {
    ...totals,
    sourceSubpanels: sources.map((x) => ({ source: x.source, ...Object.fromEntries(SOURCE_COUNTS.map((k) => [k, x[k]])) })),
  };
  const cases = recomputation.cases.map((c: unknown) => {
    if (!isObj(c) || !isList(c.sourceCounts)) throw new Error('a case must be an object with sourceCounts[]');
    const overall = cell(c.overall, minimum, passRule);
    const subs = c.sourceCounts.map((s: unknown) => cell(s, minimum, passRule));
    for (const k of CELL_COUNTS) {
      if (subs.reduce((sum, s) => sum + s[k], 0) !== overall[k])
        throw new Error(`case ${String(c.caseId)}: source ${k} does not reconcile with the overall count`);
    }
    return { caseId: c.caseId, ...overall, sourceSubpanels: subs };
  });
  type Summed = 'targetReviewerCount' | 'assignedReviewerCount' | 'submittedJudgmentCount' | (typeof CELL_COUNTS)[number];
  const sum = (k: Summed | 'missingTargetJudgmentCount' | 'missingAssignedJudgmentCount') => cases.reduce((s, c) => s + c[k], 0);
  if (
    sum('targetReviewerCount') !== coverage.targetReviewerCount * cases.length ||
    sum('assignedReviewerCount') !== coverage.assignedReviewerCount * cases.length
  ) {
    throw new Error('the per-case targets do not reconcile with the reviewer coverage');
  }
  const outcomes = cases.map((c) => c.outcome);
  const pass = outcomes.filter((o) => o === 'pass').length;
  const fail = outcomes.filter((o) => o === 'fail').length;
  const insufficient = outcomes.filter((o) => o === 'insufficient').length;
  return {
    aggregationVersion: 'rateloop.descriptive-case-quorum.v2',
    method: 'descriptive_per_case',
    minimumAggregationSize: minimum,
    reviewerCoverage: coverage,
    judgmentCoverage: {
      caseCount: cases.length,
      targetExpectedJudgmentCount: coverage.targetReviewerCount * cases.length,
      assignedExpectedJudgmentCount: coverage.assignedReviewerCount * cases.length,
      submittedJudgmentCount: sum('submittedJudgmentCount'),
      validJudgmentCount: sum('validReviewerCount'),
      invalidJudgmentCount: sum('invalidJudgmentCount'),
      pendingJudgmentCount: sum('pendingJudgmentCount'),
      missingTargetJudgmentCount: sum('missingTargetJudgmentCount'),
      missingAssignedJudgmentCount: sum('missingAssignedJudgmentCount'),
    },
    passRule,
    cases,
    suite: {
      method: 'all_cases_must_pass',
      evaluatedCaseCount: pass + fail,
      passCaseCount: pass,
      failCaseCount: fail,
      insufficientCaseCount: insufficient,
      outcome: fail > 0 ? 'fail' : insufficient > 0 || cases.length === 0 ? 'insufficient' : 'pass',
    },
  };
}

const SHA = /^sha256:[0-9a-f]{64}$/;

/** evidence.md §8.1; returns the reasons it is invalid (empty when valid). */
export function reviewContextProblems(payload: Obj, order: KeyOrder = 'code-unit'): string[] {
  const p: string[] = [];
  const rc = payload.reviewContext;
  // frozen is read as the service reads it: any object, an array too (whose admission policies are then absent,
  // which its canonical form refuses: an exception, verification_failed).
  const frozen = payload.frozen;
  if (!isObj(rc) || frozen === null || typeof frozen !== 'object') return ['reviewContext and frozen must be objects'];
  const t = rc.selectionTrigger;
  const gate = rc.gate;
  const v = rc.versions;
  if (!isObj(t) || !isObj(gate) || !isObj(v)) return ['selectionTrigger, gate and versions are required'];
  if (!isList(t.reasonCodes) || t.reasonCodes.length === 0 || t.reasonCodes.some((x: unknown) => typeof x !== 'string'))
    p.push('reasonCodes must be a non-empty array of strings');
  if (t.source === 'explicit_workspace_assurance_run') {
    if (t.kind !== 'owner_required') p.push('a manual run has kind owner_required');
    if (gate.type !== 'not_applicable') p.push('a manual run has gate.type not_applicable');
    for (const [name, value] of [
      ['gate.policyReference', gate.policyReference],
      ['gate.stopGateEvidenceReference', gate.stopGateEvidenceReference],
      ['versions.selectionPolicy', v.selectionPolicy],
      ['versions.requestProfile', v.requestProfile],
    ] as const) {
      if (value !== null) p.push(`a manual run has ${name} null`);
    }
  } else if (t.source === 'persisted_agent_review_opportunity') {
    // Integers are safe integers, as the real verifier requires (1.5 or 2^53 are not versions).
    const int = (x: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
      Number.isSafeInteger(x) && (x as number) >= min && (x as number) <= max;
    if (!oneOf(['adaptive_sample', 'critical_risk', 'guardrail_escalation', 'maximum_gap', 'owner_required', 'policy_rule'], t.kind))
      p.push('unknown selection kind');
    if (typeof t.opportunityId !== 'string') p.push('opportunityId must be a string');
    if (!int(t.selectionProbabilityBps, 0, 10000)) p.push('selectionProbabilityBps out of range');
    if (!int(t.sampleBucket, 0, 9999)) p.push('sampleBucket out of range');
    if (gate.type !== 'blocking' && gate.type !== 'advisory') p.push('gate.type must be blocking or advisory');
    const sp = v.selectionPolicy;
    const ref = gate.policyReference;
    if (!isObj(sp) || !isObj(ref) || ref.id !== sp.id || ref.version !== sp.version)
      p.push('gate.policyReference must equal versions.selectionPolicy');
    // The enforcement mode is read from the policy reference only (evidence.md §8.1, corrected against the live
    // verifier): a mode on the gate itself counts for nothing.
    const mode = isObj(ref) ? ref.enforcementMode : undefined;
    if (mode !== 'advisory' && mode !== 'host_enforced') p.push('gate.policyReference.enforcementMode must be advisory or host_enforced');
    else if ((gate.type === 'blocking') !== (mode === 'host_enforced'))
      p.push('a blocking gate is host_enforced and only a blocking gate is');
    if (
      !isObj(sp) ||
      typeof sp.id !== 'string' ||
      !int(sp.version, 1) ||
      !oneOf(['manual', 'always', 'fixed', 'rules', 'adaptive'], sp.mode)
    )
      p.push('selectionPolicy id/mode/version invalid');
    const rp = v.requestProfile;
    if (!isObj(rp) || typeof rp.id !== 'string' || !int(rp.version, 1) || typeof rp.hash !== 'string' || !SHA.test(rp.hash))
      p.push('requestProfile invalid');
    const s = gate.stopGateEvidenceReference;
    if (
      !isObj(s) ||
      s.kind !== 'human_review_lifecycle_transition' ||
      s.opportunityId !== t.opportunityId ||
      !oneOf(['completed', 'inconclusive', 'failed_terminal', 'cancelled_before_commit'], s.lifecycleState) ||
      !int(s.lifecycleRevision, 1) ||
      typeof s.transitionEventId !== 'string' ||
      typeof s.transitionCommitment !== 'string' ||
      !SHA.test(s.transitionCommitment)
    )
      p.push('stopGateEvidenceReference invalid');
  } else {
    p.push(`unknown selection source ${String(t.source)}`);
  }
  const ap = v.admissionPolicies;
  // Compared in the schema's canonical form: in the legacy form, keys localeCompare ranks equal keep their order.
  const fz = frozen as Obj;
  if (!isList(ap) || ap.length !== 1 || canonicalJson(ap, order) !== canonicalJson(fz.admissionPolicies, order))
    p.push('versions.admissionPolicies must have one entry equal to frozen.admissionPolicies');
  if (!isList(fz.admissionPolicyHashes) || fz.admissionPolicyHashes.length !== 1)
    p.push('frozen.admissionPolicyHashes must have one entry');
  const a = isList(ap) ? ap[0] : undefined;
  if (
    !isObj(a) ||
    typeof a.admissionPolicyHash !== 'string' ||
    !/^0x[0-9a-f]{64}$/.test(a.admissionPolicyHash) ||
    a.admissionPolicyHash !== firstOf(fz.admissionPolicyHashes)
  )
    p.push('admission policy hash invalid or not frozen');
  const d = isObj(a) ? a.derivedFrom : undefined;
  const aud = v.audiencePolicy;
  if (
    !isObj(d) ||
    d.kind !== 'assurance_audience_policy' ||
    !isObj(aud) ||
    d.id !== aud.id ||
    d.version !== aud.version ||
    d.hash !== aud.hash
  )
    p.push('derivedFrom must name versions.audiencePolicy');
  if (!isObj(aud) || aud.hash !== fz.policyHash) p.push('versions.audiencePolicy.hash must equal frozen.policyHash');
  return p;
}

/** Verify a parsed packet. Never throws: an exception anywhere is exactly ["verification_failed"]. */
export function verifyPacket(packet: unknown, anchor: TrustAnchor): PacketResult {
  const checks: Check[] = [];
  const errors: string[] = [];
  const add = (code: string) => {
    if (!errors.includes(code)) errors.push(code);
  };
  const check = (c: Check, code?: string) => {
    checks.push(c);
    if (c.status === 'fail' && code) add(code);
  };
  try {
    // 1. Shape.
    if (!isObj(packet) || !isObj(packet.payload) || !isObj(packet.signing)) {
      return {
        valid: false,
        errors: ['invalid_packet_shape'],
        checks: [{ id: 'shape', label: 'Packet shape', status: 'fail', detail: 'an object with payload and signing objects is required' }],
      };
    }
    const { payload, signing } = packet;
    checks.push({ id: 'shape', label: 'Packet shape', status: 'pass' });
    // 2. Schema.
    const schema = payload.schemaVersion;
    const version = schema === SCHEMAS.v4 ? 'v4' : schema === SCHEMAS.v3 ? 'v3' : schema === SCHEMAS.v2 ? 'v2' : undefined;
    check(
      { id: 'schema', label: 'Schema version', status: version ? 'pass' : 'fail', expected: Object.values(SCHEMAS), actual: schema },
      'unsupported_schema_version',
    );
    const order: KeyOrder = version === 'v4' || version === undefined ? 'code-unit' : 'locale-en-US';
    // 3. Review context: every schema but v2 (an unknown schema too, as the real verifier does).
    if (version !== 'v2') {
      const problems = reviewContextProblems(payload, order);
      check(
        {
          id: 'review_context',
          label: 'Review context',
          status: problems.length ? 'fail' : 'pass',
          detail: problems.join('; ') || undefined,
        },
        'review_context_invalid',
      );
    }
    // 4. Algorithm (stops).
    if (signing.algorithm !== 'Ed25519' && signing.algorithm !== 'ECDSA-SHA256') {
      check(
        { id: 'algorithm', label: 'Signature algorithm', status: 'fail', expected: ['Ed25519', 'ECDSA-SHA256'], actual: signing.algorithm },
        'unsupported_signature_algorithm',
      );
      return { valid: false, errors, checks };
    }
    checks.push({ id: 'algorithm', label: 'Signature algorithm', status: 'pass', actual: signing.algorithm });
    // 4b. [loopsign] The strict reading (strict.ts): every field the next steps hash, derive or verify has its one
    // type and shape, or the packet is refused here — with the service's code where it refuses the same defect
    // (its exception: exactly ["verification_failed"]), else with loopsign's own.
    const surrogate = loneSurrogateAt(signed0(payload, signing));
    const refusal: Refusal | undefined =
      surrogate !== undefined
        ? {
            code: version === 'v4' || version === undefined ? 'verification_failed' : 'lone_surrogate',
            field: surrogate,
            detail: `${surrogate} holds a lone surrogate, which no UTF-8 text can carry`,
          }
        : (signingProblem(signing, packet.signature) ??
          recomputationProblem(payload, version === 'v4' || version === undefined) ??
          (version === 'v2' ? undefined : reviewContextHashProblem(payload)));
    if (refusal) {
      checks.push({ id: 'strict', label: 'Strict reading', status: 'fail', actual: refusal.field, detail: refusal.detail });
      if (refusal.code === 'verification_failed') return { valid: false, errors: ['verification_failed'], checks };
      add(refusal.code);
      return { valid: false, errors, checks };
    }
    checks.push({ id: 'strict', label: 'Strict reading', status: 'pass' });
    // 5–6. Key id and trust anchors. [loopsign] A pin without a key id stands for the pin and the id derived from
    // it, so the packet's key id is always checked against the key the user trusts.
    const derivedKeyId = keyIdOf(fromB64url(signing.publicKey as string), signing.algorithm);
    const expectedKeyId = anchor.keyId ?? (anchor.publicKey === undefined ? undefined : keyIdOfPin(anchor.publicKey));
    if (anchor.publicKey === undefined && expectedKeyId === undefined) {
      check(
        { id: 'trust_anchor', label: 'Pinned key', status: 'fail', detail: 'no pinned public key or key id was given' },
        'missing_trust_anchor',
      );
    }
    if (anchor.publicKey !== undefined) {
      check(
        {
          id: 'pinned_key',
          label: 'Packet key equals the pinned key',
          status: anchor.publicKey === signing.publicKey ? 'pass' : 'fail',
          expected: anchor.publicKey,
          actual: signing.publicKey,
        },
        'untrusted_signing_key',
      );
    }
    if (expectedKeyId !== undefined) {
      const whose = anchor.anchorName ?? (anchor.keyId !== undefined ? 'given' : "pin's");
      check(
        {
          id: 'key_id',
          label: `Packet key id equals the ${whose} key id`,
          status: expectedKeyId === signing.keyId ? 'pass' : 'fail',
          expected: expectedKeyId,
          actual: signing.keyId,
        },
        'signing_key_id_mismatch',
      );
      const ok = KEY_ID.test(expectedKeyId) && expectedKeyId === signing.keyId && expectedKeyId === derivedKeyId;
      check(
        {
          id: 'key_id_derived',
          label: `The ${whose} key id is the packet key's id`,
          status: ok ? 'pass' : 'fail',
          expected: expectedKeyId,
          actual: derivedKeyId,
        },
        'untrusted_signing_key',
      );
    }
    // 7. Digest.
    const signed = { payload, signing };
    const packetDigest = sha256EvidenceValue(signed, order);
    check(
      {
        id: 'digest',
        label: 'Packet digest',
        status: packetDigest === packet.packetDigest ? 'pass' : 'fail',
        expected: packetDigest,
        actual: packet.packetDigest,
      },
      'packet_digest_mismatch',
    );
    // 8. Roots.
    const rec: Obj = isObj(payload.recomputation) ? payload.recomputation : {};
    const roots: Obj = isObj(payload.roots) ? payload.roots : {};
    for (const [id, label, leavesKey, rootKey, code] of [
      ['case_root', 'Content / case root', 'caseLeaves', 'caseRoot', 'case_root_mismatch'],
      ['response_root', 'Review / response root', 'responseLeaves', 'responseRoot', 'response_root_mismatch'],
    ] as const) {
      // Leaves are hashes (strings): a root over anything else proves nothing, so it never matches.
      // The strict reading has shown the leaves to be a list of strings.
      const leaves = rec[leavesKey] as string[];
      const root: string | undefined = evidenceMerkleRoot(leaves);
      check(
        {
          id,
          label,
          status: root !== undefined && root === roots[rootKey] ? 'pass' : 'fail',
          expected: root,
          actual: roots[rootKey],
          detail: root === undefined ? `${leavesKey} must be strings` : undefined,
        },
        code,
      );
    }
    // 9. Aggregation.
    const agg = isObj(payload.aggregation) ? payload.aggregation : {};
    const recomputed = recomputeAggregation(rec, agg.minimumAggregationSize, agg.passRule);
    const same = canonicalJson(recomputed) === canonicalJson(agg);
    check(
      {
        id: 'aggregation',
        label: 'Aggregation',
        status: same ? 'pass' : 'fail',
        detail: same ? undefined : 'the aggregation does not recompute from the recomputation inputs',
      },
      'aggregation_mismatch',
    );
    // Frozen manifest hashes (legacy form even in v4): reported, covered by the digest and the signature.
    const frozen = isObj(payload.frozen) ? payload.frozen : {};
    for (const [id, hashKey, bodyKey] of [
      ['run_manifest_hash', 'runManifestHash', 'runManifest'],
      ['suite_manifest_hash', 'suiteManifestHash', 'suiteManifest'],
      ['policy_hash', 'policyHash', 'policy'],
    ] as const) {
      if (frozen[bodyKey] === undefined) continue;
      const h = sha256EvidenceValue(frozen[bodyKey], 'locale-en-US');
      checks.push({
        id,
        label: `Frozen ${bodyKey} hash`,
        status: h === frozen[hashKey] ? 'pass' : 'info',
        expected: h,
        actual: frozen[hashKey],
        detail: h === frozen[hashKey] ? undefined : 'does not recompute (legacy ordering); reported only',
      });
    }
    // 10. Signature, checked with the packet's key as the real verifier does. The packet's key is never trusted
    // by itself: a valid result also needs steps 6 to have found it equal to the pin (or bound to the key id).
    const sig = fromB64url(packet.signature as string);
    const key = publicKeyObject(signing.publicKey as string);
    const bytes = Buffer.from(canonicalJson(signed, order), 'utf8');
    const ok =
      signing.algorithm === 'Ed25519'
        ? cryptoVerify(null, bytes, key, sig)
        : cryptoVerify('sha256', bytes, { key, dsaEncoding: sig.length === 64 ? 'ieee-p1363' : 'der' }, sig);
    const trusted = anchor.publicKey !== undefined && anchor.publicKey === signing.publicKey;
    const whose = trusted ? 'the pinned key' : "the packet's own key, which is not trusted by itself";
    check(
      {
        id: 'signature',
        label: 'Signature',
        status: ok ? 'pass' : 'fail',
        detail: ok ? `verified with ${whose}` : `does not verify with ${whose}`,
      },
      'signature_invalid',
    );
    return { valid: errors.length === 0, errors, packetDigest, checks };
  } catch (error) {
    return {
      valid: false,
      errors: ['verification_failed'],
      checks: [...checks, { id: 'exception', label: 'Verification', status: 'fail', detail: (error as Error).message }],
    };
  }
}
