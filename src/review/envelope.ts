// The review envelope `rateloop.human-review-tool-envelope.v1` (review.md §5.6) that the four review tools return
// in `structuredContent`, read into what loopsign acts on, and the one rule of §5.6.4 for what counts as approval.
// Everything else the service sent stays, untouched, in the document printed under `service`.
import { EvidenceInvalidError, RefusedError, ServiceError } from '../errors.js';
import { integerField, isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import { checkGateEvidence, type GateCheck, type GateTrust } from './gate.js';
import { isId, serviceId } from './ids.js';

export const ENVELOPE_SCHEMA = 'rateloop.human-review-tool-envelope.v1';
export const OPEN_STATES = ['approval_required', 'request_ready', 'pending', 'blocked'] as const;
export const TERMINAL_STATES = ['skipped', 'completed', 'inconclusive', 'failed_terminal', 'cancelled_before_commit'] as const;
/** The inner wait cursor's form (the tool's input schema). */
export const WAIT_CURSOR = /^[0-9]{1,16}(?::[0-9]{1,16})?$/;

export interface Envelope {
  /** The tool's structuredContent as it came: printed under `service`, unread beyond what is parsed here. */
  doc: ServiceDoc;
  opportunityId: string;
  workspaceId: string;
  integrationId: string;
  decision: string;
  state: string;
  revision: number;
  terminal: boolean;
  reasonCodes: string[];
  continuation: { cursor: string; retryAfterMs: number; expiresAt: string } | null;
  requestProfile: { id: string; version: number; hash: string };
  bindingHash: string;
  evaluationCommitment: string;
  lane: string;
  /** From a wait: the cursor to pass to the next wait (§5.6.3), the private delivery and its response count. */
  wait?: { cursor: string | null; deliveryId: string | null; status: string | null; responseCount: number | null };
}

function bad(tool: string, what: string): ServiceError {
  return new ServiceError('invalid_response', `the service answered ${tool} with a review envelope that ${what}`, { details: { tool } });
}

const str = (v: unknown): v is string => typeof v === 'string';

/** Reads an envelope; one for another opportunity than asked is refused (exit 5). */
export function parseEnvelope(doc: ServiceDoc, tool: string, expectOpportunity?: string): Envelope {
  if (doc.schemaVersion !== ENVELOPE_SCHEMA)
    throw bad(tool, `has schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${ENVELOPE_SCHEMA}`);
  const opportunityId = serviceId('opportunity', doc.opportunityId, 'an opportunityId');
  if (expectOpportunity !== undefined && opportunityId !== expectOpportunity) {
    throw new RefusedError('other_opportunity', `asked about ${expectOpportunity}, the service answered about ${opportunityId}: refused`, {
      details: { expected: expectOpportunity, actual: opportunityId },
    });
  }
  const workspaceId = serviceId('workspace', doc.workspaceId, 'a workspaceId');
  const integrationId = doc.integrationId;
  if (!isId('configured', integrationId)) throw bad(tool, 'has no integrationId');
  const l = objectField(doc, 'lifecycle');
  const state = l?.state;
  const states: readonly string[] = [...OPEN_STATES, ...TERMINAL_STATES];
  if (!l || !str(state) || !states.includes(state)) throw bad(tool, `has lifecycle.state ${JSON.stringify(state)}`);
  const revision = integerField(l, 'revision');
  if (revision === undefined || revision < 1) throw bad(tool, 'has no positive lifecycle.revision');
  const terminal = (TERMINAL_STATES as readonly string[]).includes(state);
  if (l.terminal !== terminal) throw bad(tool, `says terminal=${String(l.terminal)} for state ${state}`);
  const c = doc.continuation;
  let continuation: Envelope['continuation'] = null;
  if (c !== null && c !== undefined) {
    const retryAfterMs = integerField(c, 'retryAfterMs');
    if (!isDoc(c) || !str(c.cursor) || retryAfterMs === undefined || !str(c.expiresAt)) throw bad(tool, 'has a malformed continuation');
    continuation = { cursor: c.cursor, retryAfterMs, expiresAt: c.expiresAt };
  }
  if (terminal && continuation) throw bad(tool, 'is terminal but carries a continuation');
  const frozen = objectField(doc, 'frozen');
  const rp = objectField(frozen, 'requestProfile');
  const rpVersion = integerField(rp, 'version');
  if (!rp || !str(rp.id) || rpVersion === undefined || !isId('sha256', rp.hash))
    throw bad(tool, 'has no frozen.requestProfile {id, version, hash}');
  const bindingHash = objectField(frozen, 'binding')?.hash;
  if (!isId('sha256', bindingHash)) throw bad(tool, 'has no frozen.binding.hash');
  const evaluationCommitment = frozen?.evaluationCommitment;
  if (!isId('sha256', evaluationCommitment)) throw bad(tool, 'has no frozen.evaluationCommitment');
  const reasonCodes = Array.isArray(l.reasonCodes) ? l.reasonCodes.filter(str) : [];
  const env: Envelope = {
    doc,
    opportunityId,
    workspaceId,
    integrationId,
    decision: String(doc.decision),
    state,
    revision,
    terminal,
    reasonCodes,
    continuation,
    requestProfile: { id: rp.id, version: rpVersion, hash: rp.hash },
    bindingHash,
    evaluationCommitment,
    lane: String(objectField(doc, 'route')?.lane ?? 'unknown'),
  };
  const w = objectField(doc, 'wait');
  if (w) {
    // Private lanes: wait.cursor ("revision:responseCount"); the public lane: wait.continuation.cursor. Never the
    // top-level continuation.cursor, which is the bare revision (§5.6.3).
    const inner = objectField(w, 'continuation')?.cursor;
    const raw = str(w.cursor) ? w.cursor : str(inner) ? inner : null;
    env.wait = {
      cursor: raw !== null && WAIT_CURSOR.test(raw) ? raw : null,
      deliveryId: str(w.deliveryId) && /^hp[pu]d_[0-9a-f]{40}$/.test(w.deliveryId) ? w.deliveryId : null,
      status: str(w.status) ? w.status : null,
      responseCount: integerField(w, 'responseCount') ?? null,
    };
  }
  return env;
}

export interface Verdict {
  opportunityId: string;
  state: string;
  approved: boolean;
  /** Why it is or is not approval, in a word: approved, not_terminal, unsigned, no_gate_key, untrusted_gate_key, no_local_output, not_authorized, skipped. */
  reason: string;
  evidence: GateCheck['status'];
  releaseDisposition: string | null;
  resultOutcome: string | null;
  outputCommitment: string | null;
}

/**
 * §5.6.4: approval is only `completed` with signed `authorized_positive` release evidence (assurance semantics, a
 * positive outcome and a result commitment), the signature verified with a pinned key, and the evidence's output
 * commitment equal to the local hash of the output to release. Evidence naming another opportunity, workspace,
 * integration, state or output is refused (exit 5); a signature that does not verify is exit 8.
 */
export function reviewVerdict(env: Envelope, trust: GateTrust | undefined, localOutputCommitment: string | undefined): Verdict {
  const base = {
    opportunityId: env.opportunityId,
    state: env.state,
    approved: false,
    releaseDisposition: null,
    resultOutcome: null,
    outputCommitment: null,
  };
  if (!env.terminal) return { ...base, reason: 'not_terminal', evidence: 'absent' };
  const check = checkGateEvidence(env.doc.terminalEvidence, trust);
  if (check.status === 'absent') return { ...base, reason: 'unsigned', evidence: check.status };
  if (check.status === 'malformed')
    throw new EvidenceInvalidError(
      'gate_evidence_invalid',
      `the review's terminal evidence is malformed (${check.detail}); it is not approval`,
      { details: { opportunityId: env.opportunityId, state: env.state } },
    );
  if (check.status === 'no_trust_anchor') return { ...base, reason: 'no_gate_key', evidence: check.status };
  if (check.status === 'untrusted_key') return { ...base, reason: 'untrusted_gate_key', evidence: check.status };
  if (check.status === 'bad_signature') {
    throw new EvidenceInvalidError(
      'gate_signature_invalid',
      `the review's terminal evidence does not verify with the pinned key ${check.keyId}; it is not approval`,
      { details: { opportunityId: env.opportunityId, state: env.state, approved: false } },
    );
  }
  const p = check.payload;
  for (const [field, expected] of [
    ['opportunityId', env.opportunityId],
    ['workspaceId', env.workspaceId],
    ['integrationId', env.integrationId],
    ['terminalStatus', env.state],
  ] as const) {
    if (p[field] !== expected) {
      throw new RefusedError(
        'evidence_mismatch',
        `the signed evidence names ${field} ${JSON.stringify(p[field])}, the review is ${JSON.stringify(expected)}: refused`,
        { details: { field, expected, actual: p[field] } },
      );
    }
  }
  const verdict: Verdict = {
    ...base,
    reason: 'not_authorized',
    evidence: 'verified',
    releaseDisposition: str(p.releaseDisposition) ? p.releaseDisposition : null,
    resultOutcome: str(p.resultOutcome) ? p.resultOutcome : null,
    outputCommitment: str(p.outputCommitment) ? p.outputCommitment : null,
  };
  if (localOutputCommitment === undefined) return { ...verdict, reason: 'no_local_output' };
  if (p.outputCommitment !== localOutputCommitment) {
    throw new RefusedError(
      'output_mismatch',
      `the signed evidence is for output ${String(p.outputCommitment)}, the output here hashes to ${localOutputCommitment}: refused`,
      { details: { expected: localOutputCommitment, actual: p.outputCommitment } },
    );
  }
  if (env.state === 'skipped') return { ...verdict, reason: 'skipped' };
  const approved =
    env.state === 'completed' &&
    p.releaseDisposition === 'authorized_positive' &&
    p.resultSemantics === 'assurance' &&
    p.resultOutcome === 'positive' &&
    isId('sha256', p.resultCommitment);
  return { ...verdict, approved, reason: approved ? 'approved' : 'not_authorized' };
}

/** A sentence for a verdict that is not approval (exit 7 messages). */
export function verdictSentence(v: Verdict): string {
  const why: Record<string, string> = {
    not_terminal: `it is ${v.state}, not finished`,
    unsigned: `it ended ${v.state} but carries no signed terminal evidence (unverifiable; ask for the result again later)`,
    no_gate_key: `it ended ${v.state}, but no gate key was pinned to verify its evidence (unverifiable; pass --gate-key or --trusted-keys)`,
    untrusted_gate_key: `it ended ${v.state}, signed by a key that is not pinned (unverifiable)`,
    no_local_output: `it ended ${v.state}, but there is no local output to compare the evidence with (unverifiable; pass --output FILE)`,
    not_authorized: `it ended ${v.state}${v.resultOutcome ? ` (${v.resultOutcome})` : ''}, ${v.releaseDisposition ?? 'not_authorized'}`,
    skipped: 'it was skipped by the sampling policy (release allowed by the policy, but no human approved it)',
  };
  return `review ${v.opportunityId} is not approval: ${why[v.reason] ?? v.reason}`;
}
