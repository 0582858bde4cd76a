// Evidence files as the commands meet them: read within the cap of their kind, parse strictly, detect the kind,
// verify. (Downloads live in download.ts, so verifying offline loads no HTTP client.) Files are read with plain
// synchronous reads, not streams or fs.promises: loading those costs a cold `verify-evidence` some 5 ms.
import { closeSync, openSync, promises as fs, readSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { UsageCode } from '../error-codes.js';
import { EvidenceInvalidError, UsageError } from '../errors.js';
import type { AuditResult } from './audit.js';
import type { CoverageResult } from './coverage.js';
import {
  detectKind,
  kindLabel,
  KIND_MAX_BYTES,
  SNIFF_BYTES,
  sniffKind,
  STREAM_MIN_BYTES,
  type EvidenceKind,
  type KnownKind,
} from './detect.js';
import { checkTrustedKeysDocument, KEY_ID, readPin, type TrustedKey } from './keys.js';
import { verifyPacket, type PacketResult } from './packet.js';
import { parseStrictJson } from './strict-json.js';
import { quietJsonMessage } from '../json-problem.js';

/**
 * Read an evidence file without ever holding more than its kind allows: the kind is the one the user named, or
 * the one the first 64 KiB suggest (sniffKind); the rest is read only up to that kind's cap. A file whose start
 * looks like no evidence kind is refused once it is larger than the window that was read.
 */
export async function readEvidenceFile(file: string, expected?: KnownKind): Promise<{ doc: unknown; kind: EvidenceKind; bytes: number }> {
  const name = file === '-' ? 'stdin' : file;
  let size: number | undefined;
  if (file !== '-') {
    let stat;
    try {
      stat = statSync(file);
    } catch {
      throw new UsageError('file_not_found', `${file} does not exist or cannot be read`);
    }
    if (!stat.isFile()) throw new UsageError('not_a_file', `${file} is not a file`);
    size = stat.size;
    if (expected && size > KIND_MAX_BYTES[expected]) throw tooLarge(name, expected, size);
  }
  const source = file === '-' ? process.stdin : chunksOf(file);
  const chunks: Buffer[] = [];
  let read = 0;
  let kind: EvidenceKind | undefined = expected;
  let cap = expected ? KIND_MAX_BYTES[expected] : SNIFF_BYTES;
  // Leaving the loop early (a throw) destroys the stream or closes the file: nothing more is read.
  for await (const chunk of source) {
    chunks.push(chunk as Buffer);
    read += (chunk as Buffer).length;
    if (kind === undefined && read >= SNIFF_BYTES) {
      const sniffed = sniffKind(Buffer.concat(chunks).subarray(0, SNIFF_BYTES).toString('utf8'));
      if (sniffed !== 'unknown') {
        cap = KIND_MAX_BYTES[sniffed];
        if (size !== undefined && size > cap) throw tooLarge(name, sniffed, size);
      }
      kind = sniffed;
    }
    if (read > cap) throw kind === undefined || kind === 'unknown' ? unrecognised(name) : tooLarge(name, kind, size);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const doc = parseEvidenceText(text, name);
  const detected = detectKind(doc);
  // The parsed document decides the kind; its cap applies too (a smaller one than the sniffed kind's may).
  if (detected !== 'unknown' && read > KIND_MAX_BYTES[detected]) throw tooLarge(name, detected, read);
  return { doc, kind: detected, bytes: read };
}

/** A file's bytes, SNIFF_BYTES at a time; closed when the reader stops early. */
function* chunksOf(file: string): Generator<Buffer> {
  const fd = openSync(file, 'r');
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(SNIFF_BYTES);
      const n = readSync(fd, chunk, 0, SNIFF_BYTES, null);
      if (n === 0) return;
      yield chunk.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

function tooLarge(name: string, kind: KnownKind, size: number | undefined): UsageError {
  const limit = KIND_MAX_BYTES[kind];
  return new UsageError(
    'too_large',
    `${name} is ${size === undefined ? `more than ${limit}` : size} bytes; ${kindLabel(kind)} may be at most ${limit} bytes`,
    {
      hint: kind === 'packet' ? "evidence packets are at most 2 MB (the service's own verifier limit)" : undefined,
    },
  );
}

function unrecognised(name: string): UsageError {
  return new UsageError(
    'invalid_packet_shape',
    `${name} is not an evidence file: its first ${SNIFF_BYTES / 1024} KiB show no packet, audit, coverage or trusted-keys fields`,
    {
      hint: 'an evidence file is a JSON object; use --audit FILE or --coverage FILE to say which export it is',
    },
  );
}

export function parseEvidenceText(text: string, what: string, code: UsageCode = 'invalid_packet_shape'): unknown {
  try {
    return parseStrictJson(text);
  } catch (error) {
    throw notJson(what, quietJsonMessage((error as Error).message), code);
  }
}

const notJson = (what: string, reason: string, code: UsageCode = 'invalid_packet_shape'): UsageError =>
  new UsageError(code, `${what} is not usable JSON: ${reason}`);

/**
 * Verify an evidence file: `expected` is the kind the user named (--audit, --coverage), if any. An audit export
 * of STREAM_MIN_BYTES or more is streamed and checked on every core instead of being read whole: its memory stays
 * bounded however many events it has, so the whole-file cap does not apply to it (audit-stream.ts bounds its
 * events and other fields instead). Everything else — stdin, smaller files, other kinds — is read within its
 * kind's cap as before.
 */
export async function verifyEvidenceFile(
  file: string,
  expected: 'audit' | 'coverage' | undefined,
  trust: PacketTrust,
  expectedHead?: string,
): Promise<VerifyOutcome> {
  if (file !== '-' && expected !== 'coverage') {
    const streamed = await streamedAudit(file, expected === 'audit', expectedHead);
    if (streamed) return streamed;
  }
  const { doc, kind: detected } = await readEvidenceFile(file, expected);
  return verifyDocument(doc, expected ?? detected, trust, expectedHead);
}

async function streamedAudit(file: string, named: boolean, expectedHead?: string): Promise<VerifyOutcome | undefined> {
  let stat: Stats;
  try {
    stat = statSync(file);
  } catch {
    return undefined; // reported by readEvidenceFile
  }
  if (!stat.isFile() || stat.size < STREAM_MIN_BYTES) return undefined;
  const chunks = chunksOf(file);
  const start = chunks.next().value?.toString('utf8') ?? '';
  chunks.return(undefined); // closes the file
  // Only an object is taken apart as it streams; anything else is read whole, within the cap, and refused there.
  if (!/^[ \t\r\n]*\{/.test(start) || (!named && sniffKind(start) !== 'audit')) return undefined;
  const { verifyAuditFile } = await import('./audit-stream.js');
  const streamed = await verifyAuditFile(file, { expectedHead });
  if (streamed.jsonError !== undefined) throw notJson(file, quietJsonMessage(streamed.jsonError));
  // The whole document says it is another kind after all: read it as that kind, within that kind's cap.
  if (!named && detectKind(streamed.shell) !== 'audit') return undefined;
  return { kind: 'audit', result: streamed.result! };
}

/** Where an evidence download or pin is saved: private (0600), atomically, never through a link, never over a file without --force. */
export async function saveEvidenceText(out: string, text: string, force: boolean): Promise<string> {
  const file = path.resolve(out);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const { writeFileNoFollow } = await import('../fsutil.js'); // (write-file-atomic: not loaded to verify)
  await writeFileNoFollow(file, text, { replace: force, replaceFlag: '--force' });
  return file;
}

/** The same refusals as saveEvidenceText, before anything is downloaded. */
export async function checkEvidenceOut(out: string, force: boolean): Promise<void> {
  const { refuseUnwritable } = await import('../fsutil.js');
  await refuseUnwritable(path.resolve(out), { replace: force, replaceFlag: '--force' });
}

export interface PacketTrust {
  publicKey?: string;
  keyId?: string;
  trustedKeys?: string;
}

export async function trustedKeysFrom(file: string): Promise<TrustedKey[]> {
  const { doc } = await readEvidenceFile(file, 'trusted-keys');
  return checkTrustedKeysDocument(doc);
}

/** A packet is verified only against a key the user gives: refused (exit 2) before any work when there is none. */
export function requireTrust(trust: PacketTrust): void {
  if (trust.trustedKeys === undefined && trust.publicKey === undefined) {
    throw new UsageError(
      'missing_trust_anchor',
      'verifying a packet needs --public-key (with or without --key-id) or --trusted-keys FILE',
      {
        hint: 'the key inside the packet is never trusted; get the pin with `loopsign evidence pin --key-id ed25519:… --out key.spki.txt`',
      },
    );
  }
}

/** Verify a packet with the user's anchor: a pin and key id, or a saved trusted-keys document. */
export async function verifyPacketWith(doc: unknown, trust: PacketTrust): Promise<PacketResult> {
  if (trust.trustedKeys !== undefined) {
    if (trust.publicKey !== undefined) {
      throw new UsageError(
        'usage',
        'give one trust anchor: --public-key (with or without --key-id) or --trusted-keys FILE (with or without --key-id), not both',
      );
    }
    if (trust.keyId !== undefined && !KEY_ID.test(trust.keyId)) {
      throw new UsageError('invalid_key_id', `--key-id ${trust.keyId} is not a key id (ed25519:<24 hex> or p256:<24 hex>)`);
    }
    const keys = await trustedKeysFrom(trust.trustedKeys);
    const signing = (doc as { signing?: { keyId?: string; algorithm?: string } })?.signing;
    // With --key-id, that key and no other: it must be in the document, and the packet must be signed by it.
    if (trust.keyId !== undefined) {
      const pinned = keys.find((k) => k.keyId === trust.keyId && k.uses.includes('decision_packet'));
      if (!pinned) {
        const r = verifyPacket(doc, {});
        const errors = r.errors.map((e) => (e === 'missing_trust_anchor' ? 'untrusted_signing_key' : e));
        return {
          ...r,
          valid: false,
          errors: [...new Set([...errors, 'untrusted_signing_key'])],
          checks: [
            ...r.checks,
            {
              id: 'trusted_keys',
              label: 'The given key id is a trusted decision-packet key',
              status: 'fail',
              expected: trust.keyId,
              actual: keys.map((k) => k.keyId).join(', '),
              detail: `--key-id ${trust.keyId} is not a decision-packet key of ${trust.trustedKeys}`,
            },
          ],
        };
      }
      return verifyPacket(doc, { publicKey: pinned.publicKeySpki, keyId: pinned.keyId });
    }
    const key = keys.find((k) => k.keyId === signing?.keyId && k.algorithm === signing?.algorithm && k.uses.includes('decision_packet'));
    if (!key) {
      const r = verifyPacket(doc, {});
      const errors = r.errors.map((e) => (e === 'missing_trust_anchor' ? 'untrusted_signing_key' : e));
      return {
        ...r,
        valid: false,
        errors: [...new Set(errors)],
        checks: [
          ...r.checks,
          {
            id: 'trusted_keys',
            label: 'Key in the trusted keys',
            status: 'fail',
            actual: signing?.keyId,
            detail: "the packet's key is not a trusted decision-packet key",
          },
        ],
      };
    }
    // The key was chosen by the packet's own key id: the check says it is the trusted key's id, not a given one.
    return verifyPacket(doc, { publicKey: key.publicKeySpki, keyId: key.keyId, anchorName: "trusted key's" });
  }
  requireTrust(trust);
  // Without --key-id the id derived from the pin is expected (verifyPacket derives it).
  return verifyPacket(doc, { publicKey: await readPin(trust.publicKey!), keyId: trust.keyId });
}

export type VerifyOutcome =
  | { kind: 'packet'; result: PacketResult }
  | { kind: 'audit'; result: AuditResult }
  | { kind: 'coverage'; result: CoverageResult };

export async function verifyDocument(doc: unknown, kind: EvidenceKind, trust: PacketTrust, expectedHead?: string): Promise<VerifyOutcome> {
  if (kind === 'packet') return { kind, result: await verifyPacketWith(doc, trust) };
  // Each kind's verifier is loaded when a document of that kind is verified.
  if (kind === 'audit') return { kind, result: (await import('./audit.js')).verifyAuditExport(doc, expectedHead) };
  if (kind === 'coverage') return { kind, result: (await import('./coverage.js')).verifyCoverageExport(doc) };
  throw new UsageError('invalid_packet_shape', 'the file is not an evidence packet, an audit export or a coverage export', {
    hint: 'use --audit FILE or --coverage FILE to say which it is',
  });
}

/** A downloaded document that names another run or workspace than the one asked for. */
export interface SubjectMismatch {
  field: 'payload.runId' | 'workspaceId';
  expected: string;
  actual: unknown;
}

export function invalidError(outcome: VerifyOutcome, mismatch?: SubjectMismatch): EvidenceInvalidError {
  const what = outcome.kind === 'packet' ? 'the evidence packet' : outcome.kind === 'audit' ? 'the audit chain' : 'the coverage export';
  const message = mismatch
    ? `${what} is for ${mismatch.field} ${JSON.stringify(mismatch.actual ?? null).slice(0, 120)}, not the ${JSON.stringify(mismatch.expected)} asked for; nothing was written`
    : `${what} did not verify: ${outcome.result.errors.join(', ')}`;
  return new EvidenceInvalidError('evidence_invalid', message, {
    details: { kind: outcome.kind, ...outcome.result, ...(mismatch ? { mismatch } : {}) },
  });
}
