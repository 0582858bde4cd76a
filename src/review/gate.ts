// Signed terminal and skip evidence of a review (review.md §5.6.2): Ed25519 over the compact JSON of the payload with
// its keys in exactly the service's order. Only keys the user pinned are trusted — a pin file, or the entries of a
// saved trusted-keys document whose `uses` name `human_review_gate`; the evidence's own keyId only selects among them.
import { createPublicKey, verify } from 'node:crypto';
import { UsageError } from '../errors.js';
import { fromB64url, keyIdOf, readPin } from '../evidence/keys.js';
import { trustedKeysFrom } from '../evidence/files.js';

export const TERMINAL_EVIDENCE_SCHEMA = 'rateloop.human-review-terminal-evidence.v2';
export const SKIP_EVIDENCE_SCHEMA = 'rateloop.human-review-skip-release-evidence.v1';

// The payload layouts, in signing order.
const LAYOUTS: Record<string, { payloadSchema: string; keys: string[] }> = {
  [TERMINAL_EVIDENCE_SCHEMA]: {
    payloadSchema: 'rateloop.human-review-terminal-payload.v2',
    keys: [
      'schemaVersion',
      'workspaceId',
      'integrationId',
      'opportunityId',
      'terminalStatus',
      'releaseDisposition',
      'resultSemantics',
      'resultOutcome',
      'resultCommitment',
      'outputCommitment',
      'policyBindingHash',
      'issuedAt',
    ],
  },
  [SKIP_EVIDENCE_SCHEMA]: {
    payloadSchema: 'rateloop.human-review-skip-release-payload.v1',
    keys: [
      'schemaVersion',
      'workspaceId',
      'integrationId',
      'opportunityId',
      'decision',
      'terminalStatus',
      'outputCommitment',
      'policyBindingHash',
      'scopeCommitment',
      'issuedAt',
    ],
  },
};

export interface GateKey {
  keyId: string;
  spki: string;
}

export interface GateTrust {
  keys: GateKey[];
  /** Where the keys came from, for messages. */
  source: string;
}

export interface GateTrustOptions {
  gateKey?: string;
  trustedKeys?: string;
}

/** The user's anchor for gate evidence, or undefined when none was given. */
export async function gateTrustFrom(o: GateTrustOptions): Promise<GateTrust | undefined> {
  if (o.gateKey !== undefined && o.trustedKeys !== undefined)
    throw new UsageError('usage', 'give the gate key once: --gate-key PIN or --trusted-keys FILE, not both');
  if (o.gateKey !== undefined) {
    let spki: string;
    try {
      spki = await readPin(o.gateKey);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      throw new UsageError('invalid_gate_key', '--gate-key is neither a readable pin file nor a base64url SPKI Ed25519 key', {
        hint: 'pin the review-gate key: `loopsign evidence keys --out trusted-keys.json`, then `loopsign evidence pin --key-id ed25519:… --trusted-keys trusted-keys.json --out gate.spki.txt`',
      });
    }
    return { keys: [{ keyId: keyIdOf(fromB64url(spki)), spki }], source: `the pinned key ${o.gateKey}` };
  }
  if (o.trustedKeys !== undefined) {
    const keys = (await trustedKeysFrom(o.trustedKeys)).filter(
      (k) => k.algorithm === 'Ed25519' && Array.isArray(k.uses) && k.uses.includes('human_review_gate'),
    );
    if (keys.length === 0)
      throw new UsageError('no_gate_key', `${o.trustedKeys} lists no Ed25519 key for human_review_gate`, {
        hint: 'download the current document with `loopsign evidence keys --out trusted-keys.json`',
      });
    return { keys: keys.map((k) => ({ keyId: k.keyId, spki: k.publicKeySpki })), source: `the human_review_gate keys of ${o.trustedKeys}` };
  }
  return undefined;
}

export type GateCheck =
  | { status: 'verified'; keyId: string; payload: Record<string, unknown> }
  | { status: 'absent' }
  | { status: 'no_trust_anchor'; keyId: string }
  | { status: 'untrusted_key'; keyId: string }
  | { status: 'bad_signature'; keyId: string }
  | { status: 'malformed'; detail: string };

/** The exact bytes the service signed, or a reason the evidence is not in a signable shape. */
export function signedBytes(evidence: Record<string, unknown>): { bytes: Buffer; payload: Record<string, unknown> } | { detail: string } {
  const layout = LAYOUTS[String(evidence.schemaVersion)];
  if (!layout) return { detail: `unknown evidence schema ${JSON.stringify(evidence.schemaVersion)}` };
  const payload = evidence.payload as Record<string, unknown> | null;
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return { detail: 'the evidence has no payload object' };
  if (payload.schemaVersion !== layout.payloadSchema)
    return { detail: `payload schema ${JSON.stringify(payload.schemaVersion)} is not ${layout.payloadSchema}` };
  const keys = Object.keys(payload);
  // An unsigned extra member could say anything: the payload must be exactly the signed layout.
  if (keys.length !== layout.keys.length || layout.keys.some((k) => !(k in payload)))
    return { detail: `the payload members are not exactly ${layout.keys.join(', ')}` };
  const ordered: Record<string, unknown> = {};
  for (const k of layout.keys) ordered[k] = payload[k];
  return { bytes: Buffer.from(JSON.stringify(ordered), 'utf8'), payload: ordered };
}

export function checkGateEvidence(evidence: unknown, trust: GateTrust | undefined): GateCheck {
  if (evidence === null || evidence === undefined) return { status: 'absent' };
  if (typeof evidence !== 'object' || Array.isArray(evidence)) return { status: 'malformed', detail: 'terminalEvidence is not an object' };
  const e = evidence as Record<string, unknown>;
  if (typeof e.keyId !== 'string' || !/^ed25519:[0-9a-f]{24}$/.test(e.keyId))
    return { status: 'malformed', detail: 'keyId is not ed25519:<24 hex>' };
  if (typeof e.signature !== 'string' || !/^[A-Za-z0-9_-]{86}$/.test(e.signature))
    return { status: 'malformed', detail: 'signature is not 64 bytes of base64url' };
  const signed = signedBytes(e);
  if ('detail' in signed) return { status: 'malformed', detail: signed.detail };
  if (!trust) return { status: 'no_trust_anchor', keyId: e.keyId };
  const key = trust.keys.find((k) => k.keyId === e.keyId);
  if (!key) return { status: 'untrusted_key', keyId: e.keyId };
  const ok = verify(
    null,
    signed.bytes,
    createPublicKey({ key: fromB64url(key.spki), format: 'der', type: 'spki' }),
    fromB64url(e.signature),
  );
  return ok ? { status: 'verified', keyId: e.keyId, payload: signed.payload } : { status: 'bad_signature', keyId: e.keyId };
}
