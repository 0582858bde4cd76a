// The strict reading of a packet and of an audit event, before anything is hashed or verified (issue 39). Each
// field has one accepted JSON type and shape per schema version; anything else is refused here, never coerced.
//
// What a refusal is called follows the service's own offline verifier (RateLoop assurance-evidence-core.mjs and
// audit-export-core.mjs, tokenless cd36e60), which test/evidence-differential.test.ts replays case by case:
// - where the service refuses the same defect itself, with the code it gives — mostly `verification_failed`, the
//   code of its exception (a signature that is not a string, leaves that are not a list, a key of the wrong type);
// - where the service would coerce or accept it (a padded signature, leaves written as a string, a pass rule of
//   strings, a hash in a one-element array, an audit column that is a number, null or spelled twice), with one of
//   loopsign's own codes, OWN_CODES, each listed in docs/evidence.md with the service's behaviour beside it.
import { createPublicKey } from 'node:crypto';
import { isDoc } from '../service/doc.js';

/** loopsign's own verdict codes: a packet or export refused by a rule the service's verifier does not have. */
export const OWN_CODES = ['malformed_field', 'lone_surrogate', 'ambiguous_column'] as const;
export type OwnCode = (typeof OWN_CODES)[number];
/** The codes by which loopsign deliberately refuses more than the service (the differential test's list). */
export const DELIBERATE_CODES: readonly string[] = OWN_CODES;

/** A refusal: the code (the service's, or loopsign's own), the field, and what is wrong with it. */
export interface Refusal {
  code: 'verification_failed' | OwnCode;
  field: string;
  detail: string;
}

const refuse = (code: Refusal['code'], field: string, detail: string): Refusal => ({ code, field, detail });
const describe = (v: unknown): string =>
  v === undefined ? 'missing' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/** The first string or key with a lone surrogate (UTF-8 cannot carry one), as a path; undefined when there is none. */
export function loneSurrogateAt(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : at || '(the value)';
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogateAt(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (!k.isWellFormed()) return `${at ? `${at}.` : ''}(a key)`;
    const found = loneSurrogateAt(v, at ? `${at}.${k}` : k);
    if (found) return found;
  }
  return undefined;
}

// The service's base64url reader: letters, digits, - and _, then at most two '=' (and never 4n+1 characters).
const SERVICE_B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** A base64url field (key, signature): one unpadded base64url string. */
function base64urlProblem(value: unknown, field: string): Refusal | undefined {
  if (typeof value !== 'string') return refuse('verification_failed', field, `${field} is ${describe(value)}, not a base64url string`);
  const unpadded = value.replace(/=+$/, '');
  if (!SERVICE_B64URL.test(value) || unpadded.length % 4 === 1)
    return refuse('verification_failed', field, `${field} is not base64url (letters, digits, - and _)`);
  if (unpadded !== value)
    return refuse('malformed_field', field, `${field} ends in '=' padding; base64url here is unpadded (the service would strip it)`);
  return undefined;
}

/** A DER length as the service reads it: short form, or long form of 1–2 octets for 128 and more. */
function derLength(b: Buffer, at: number): { length: number; at: number } | undefined {
  const first = b[at];
  if (first === undefined) return undefined;
  if ((first & 0x80) === 0) return { length: first, at: at + 1 };
  const octets = first & 0x7f;
  if (octets === 0 || octets > 2 || at + octets >= b.length) return undefined;
  let length = 0;
  for (let i = 0; i < octets; i++) length = (length << 8) | b[at + 1 + i]!;
  return length < 128 ? undefined : { length, at: at + 1 + octets };
}

/** A positive DER INTEGER of at most 32 bytes in minimal form; the offset after it. */
function derInteger(b: Buffer, at: number): number | undefined {
  if (b[at] !== 0x02) return undefined;
  const len = derLength(b, at + 1);
  if (!len || len.length === 0 || len.at + len.length > b.length) return undefined;
  let int = b.subarray(len.at, len.at + len.length);
  if ((int[0]! & 0x80) !== 0) return undefined;
  if (int.length > 1 && int[0] === 0) {
    if ((int[1]! & 0x80) === 0) return undefined;
    int = int.subarray(1);
  }
  return int.length > 32 ? undefined : len.at + len.length;
}

/** An ECDSA P-256 signature: 64 bytes (P1363), or else DER as strict as the service's reader. */
export function isP256Signature(sig: Buffer): boolean {
  if (sig.length === 64) return true;
  if (sig[0] !== 0x30) return false;
  const seq = derLength(sig, 1);
  if (!seq || seq.at + seq.length !== sig.length) return false;
  const r = derInteger(sig, seq.at);
  const s = r === undefined ? undefined : derInteger(sig, r);
  return s === sig.length;
}

/**
 * The signing block, read before the key id is derived or anything hashed: the key one unpadded base64url SPKI of
 * the type its algorithm label names (an Ed25519 label over a P-256 key is refused, however it is signed), the
 * signature one unpadded base64url string of a form that algorithm has.
 */
export function signingProblem(signing: Record<string, unknown>, signature: unknown): Refusal | undefined {
  const key = base64urlProblem(signing.publicKey, 'signing.publicKey');
  if (key) return key;
  let type: string | undefined;
  let curve: string | undefined;
  try {
    const k = createPublicKey({ key: Buffer.from(signing.publicKey as string, 'base64url'), format: 'der', type: 'spki' });
    type = k.asymmetricKeyType;
    curve = k.asymmetricKeyDetails?.namedCurve;
  } catch {
    return refuse('verification_failed', 'signing.publicKey', 'signing.publicKey is not an SPKI public key');
  }
  const ed = signing.algorithm === 'Ed25519';
  if (ed ? type !== 'ed25519' : type !== 'ec' || curve !== 'prime256v1') {
    return refuse(
      'verification_failed',
      'signing.algorithm',
      `signing.algorithm is ${String(signing.algorithm)} but signing.publicKey is ${type === 'ec' ? `an EC (${String(curve)})` : `an ${String(type)}`} key`,
    );
  }
  const sig = base64urlProblem(signature, 'signature');
  if (sig) return sig;
  if (!ed && !isP256Signature(Buffer.from(signature as string, 'base64url')))
    return refuse('verification_failed', 'signature', 'the ECDSA signature is neither 64 bytes (P1363) nor strict DER');
  return undefined;
}

/**
 * What the recomputation steps read: roots, leaves (lists of strings), the aggregation and its pass rule (an object
 * of safe integers), and — in v4, whose RFC 8785 form has no "absent" value — every case's caseId and every reviewer
 * source's source.
 */
export function recomputationProblem(payload: Record<string, unknown>, v4: boolean): Refusal | undefined {
  if (payload.roots === null || payload.roots === undefined)
    return refuse('verification_failed', 'payload.roots', `payload.roots is ${describe(payload.roots)}`);
  const rec = payload.recomputation;
  if (!isDoc(rec))
    return refuse('verification_failed', 'payload.recomputation', `payload.recomputation is ${describe(rec)}, not an object`);
  for (const key of ['caseLeaves', 'responseLeaves'] as const) {
    const leaves = rec[key];
    const field = `payload.recomputation.${key}`;
    if (typeof leaves === 'string')
      return refuse(
        'malformed_field',
        field,
        `${field} is a string, not a list of leaf hashes (the service would take its characters as leaves)`,
      );
    if (!Array.isArray(leaves)) return refuse('verification_failed', field, `${field} is ${describe(leaves)}, not a list`);
    const at = leaves.findIndex((x: unknown) => typeof x !== 'string');
    if (at !== -1)
      return refuse('malformed_field', `${field}[${at}]`, `${field}[${at}] is ${describe(leaves[at])}, not a leaf hash string`);
  }
  const agg = payload.aggregation;
  if (!isDoc(agg)) return refuse('verification_failed', 'payload.aggregation', `payload.aggregation is ${describe(agg)}, not an object`);
  const minimum = agg.minimumAggregationSize;
  if (!Number.isSafeInteger(minimum) || (minimum as number) < 1)
    return refuse(
      'verification_failed',
      'payload.aggregation.minimumAggregationSize',
      'payload.aggregation.minimumAggregationSize is not a positive integer',
    );
  const rule = agg.passRule;
  // Without a rule the service fails on the first case it judges (an exception); with no case it copies the null.
  if ((rule === null || rule === undefined) && Array.isArray(rec.cases) && rec.cases.length > 0)
    return refuse('verification_failed', 'payload.aggregation.passRule', `payload.aggregation.passRule is ${describe(rule)}`);
  if (!isDoc(rule))
    return refuse('malformed_field', 'payload.aggregation.passRule', `payload.aggregation.passRule is ${describe(rule)}, not an object`);
  for (const k of ['minimumValidResponses', 'thresholdBps'] as const) {
    if (!Number.isSafeInteger(rule[k]))
      return refuse(
        'malformed_field',
        `payload.aggregation.passRule.${k}`,
        `payload.aggregation.passRule.${k} is ${typeof rule[k] === 'number' ? String(rule[k]) : describe(rule[k])}, not a safe integer (the service would compare it with JavaScript's coercions)`,
      );
  }
  if (v4) {
    const cases = Array.isArray(rec.cases) ? rec.cases : [];
    const at = cases.findIndex((c: unknown) => isDoc(c) && c.caseId === undefined);
    if (at !== -1)
      return refuse(
        'verification_failed',
        `payload.recomputation.cases[${at}].caseId`,
        `payload.recomputation.cases[${at}] has no caseId (a v4 case has one)`,
      );
    const sources = Array.isArray(rec.reviewerSources) ? rec.reviewerSources : [];
    const s = sources.findIndex((x: unknown) => isDoc(x) && x.source === undefined);
    if (s !== -1)
      return refuse(
        'verification_failed',
        `payload.recomputation.reviewerSources[${s}].source`,
        `payload.recomputation.reviewerSources[${s}] has no source (a v4 reviewer source has one)`,
      );
  }
  return undefined;
}

/** The review context's hashes that must be strings: a one-element array would pass the service's regular expression. */
export function reviewContextHashProblem(payload: Record<string, unknown>): Refusal | undefined {
  const rc = isDoc(payload.reviewContext) ? payload.reviewContext : {};
  const versions = isDoc(rc.versions) ? rc.versions : {};
  const gate = isDoc(rc.gate) ? rc.gate : {};
  const audience = versions.audiencePolicy;
  if (!isDoc(audience))
    return refuse(
      'malformed_field',
      'payload.reviewContext.versions.audiencePolicy',
      `payload.reviewContext.versions.audiencePolicy is ${describe(audience)}, not an object (the service compares its absent fields as equal)`,
    );
  for (const [field, holder, key] of [
    ['payload.reviewContext.versions.requestProfile.hash', versions.requestProfile, 'hash'],
    ['payload.reviewContext.gate.stopGateEvidenceReference.transitionCommitment', gate.stopGateEvidenceReference, 'transitionCommitment'],
  ] as const) {
    const v = isDoc(holder) ? holder[key] : undefined;
    if (v !== undefined && v !== null && typeof v !== 'string' && /^sha256:[0-9a-f]{64}$/.test(String(v)))
      return refuse('malformed_field', field, `${field} is ${describe(v)}, not a string (the service would read it as its text)`);
  }
  return undefined;
}
