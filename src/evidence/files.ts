// Evidence files as the commands meet them: read with a size cap and strict JSON, detect the kind, verify, and
// (Downloads live in download.ts, so verifying offline loads no HTTP client.)
import { promises as fs } from 'node:fs';
import { EvidenceInvalidError, UsageError } from '../errors.js';
import { verifyAuditExport, type AuditResult } from './audit.js';
import { verifyCoverageExport, type CoverageResult } from './coverage.js';
import { detectKind, type EvidenceKind } from './detect.js';
import { checkTrustedKeysDocument, readPin, type TrustedKey } from './keys.js';
import { verifyPacket, type PacketResult } from './packet.js';
import { parseStrictJson } from './strict-json.js';

export const PACKET_MAX_BYTES = 2_000_000;
export const EXPORT_MAX_BYTES = 512 * 1024 * 1024;

async function readText(file: string, maxBytes: number): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of process.stdin) {
      size += (c as Buffer).length;
      if (size > maxBytes) throw new UsageError('too_large', `stdin holds more than ${maxBytes} bytes`);
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  let stat;
  try {
    stat = await fs.stat(file);
  } catch {
    throw new UsageError('file_not_found', `${file} does not exist or cannot be read`);
  }
  if (!stat.isFile()) throw new UsageError('not_a_file', `${file} is not a file`);
  if (stat.size > maxBytes) throw new UsageError('too_large', `${file} is ${stat.size} bytes; the limit is ${maxBytes}`, { hint: 'evidence packets are at most 2 MB (the service\'s own verifier limit)' });
  return fs.readFile(file, 'utf8');
}

export function parseEvidenceText(text: string, what: string, code = 'invalid_packet_shape'): unknown {
  try {
    return parseStrictJson(text);
  } catch (error) {
    throw new UsageError(code, `${what} is not usable JSON: ${(error as Error).message}`);
  }
}

export async function readEvidenceFile(file: string, maxBytes = EXPORT_MAX_BYTES): Promise<{ doc: unknown; kind: EvidenceKind; bytes: number }> {
  const text = await readText(file, maxBytes);
  const doc = parseEvidenceText(text, file);
  const kind = detectKind(doc);
  if (kind === 'packet' && Buffer.byteLength(text) > PACKET_MAX_BYTES) throw new UsageError('too_large', `${file} is larger than the 2 MB packet limit`);
  return { doc, kind, bytes: Buffer.byteLength(text) };
}

export interface PacketTrust {
  publicKey?: string;
  keyId?: string;
  trustedKeys?: string;
}

export async function trustedKeysFrom(file: string): Promise<TrustedKey[]> {
  const { doc } = await readEvidenceFile(file, 4 * 1024 * 1024);
  return checkTrustedKeysDocument(doc);
}

/** Verify a packet with the user's anchor: a pin and key id, or a saved trusted-keys document. */
export async function verifyPacketWith(doc: unknown, trust: PacketTrust): Promise<PacketResult> {
  if (trust.trustedKeys !== undefined) {
    const keys = await trustedKeysFrom(trust.trustedKeys);
    const signing = (doc as { signing?: { keyId?: string; algorithm?: string } })?.signing;
    const key = keys.find((k) => k.keyId === signing?.keyId && k.algorithm === signing?.algorithm && (k.uses === undefined || k.uses.includes('decision_packet')));
    if (!key) {
      const r = verifyPacket(doc, {});
      const errors = r.errors.map((e) => (e === 'missing_trust_anchor' ? 'untrusted_signing_key' : e));
      return { ...r, valid: false, errors: [...new Set(errors)], checks: [...r.checks, { id: 'trusted_keys', label: 'Key in the trusted keys', status: 'fail', actual: signing?.keyId, detail: 'the packet\'s key is not a trusted decision-packet key' }] };
    }
    return verifyPacket(doc, { publicKey: key.publicKeySpki, keyId: key.keyId });
  }
  if (trust.publicKey === undefined || trust.keyId === undefined) {
    throw new UsageError('missing_trust_anchor', 'verifying a packet needs --public-key and --key-id (or --trusted-keys FILE)', {
      hint: 'the key inside the packet is never trusted; get the pin with `loopsign evidence pin --key-id ed25519:… --out key.spki.txt`',
    });
  }
  return verifyPacket(doc, { publicKey: await readPin(trust.publicKey), keyId: trust.keyId });
}

export type VerifyOutcome =
  | { kind: 'packet'; result: PacketResult }
  | { kind: 'audit'; result: AuditResult }
  | { kind: 'coverage'; result: CoverageResult };

export async function verifyDocument(doc: unknown, kind: EvidenceKind, trust: PacketTrust, expectedHead?: string): Promise<VerifyOutcome> {
  if (kind === 'packet') return { kind, result: await verifyPacketWith(doc, trust) };
  if (kind === 'audit') return { kind, result: verifyAuditExport(doc, expectedHead) };
  if (kind === 'coverage') return { kind, result: verifyCoverageExport(doc) };
  throw new UsageError('invalid_packet_shape', 'the file is not an evidence packet, an audit export or a coverage export', {
    hint: 'use --audit FILE or --coverage FILE to say which it is',
  });
}

export function invalidError(outcome: VerifyOutcome): EvidenceInvalidError {
  const what = outcome.kind === 'packet' ? 'the evidence packet' : outcome.kind === 'audit' ? 'the audit chain' : 'the coverage export';
  return new EvidenceInvalidError('evidence_invalid', `${what} did not verify: ${outcome.result.errors.join(', ')}`, {
    details: { kind: outcome.kind, ...outcome.result },
  });
}
