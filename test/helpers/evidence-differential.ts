// The differential evidence corpus (test/fixtures/evidence-differential/): packets and audit exports made by
// scripts/evidence-corpus.mjs, and the verdicts the service's own offline verifiers gave on each. Here: loopsign's
// verdict on each case, reached as `verify-evidence` reaches it (the strict JSON read, the kind of file, the trust
// anchor as the flags give it), and how it compares with the service's.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { DELIBERATE_CODES } from '../../src/evidence/strict.js';
import { verifyAuditExport } from '../../src/evidence/audit.js';
import { detectKind } from '../../src/evidence/detect.js';
import { parseEvidenceText, verifyPacketWith } from '../../src/evidence/files.js';
import { LoopsignError } from '../../src/errors.js';
import { ROOT } from './cli.js';

export const DIFFERENTIAL = path.join(ROOT, 'test', 'fixtures', 'evidence-differential');

export interface DifferentialCase {
  id: string;
  class: string;
  kind: 'packet' | 'audit';
  text: string;
  trust: { publicKey?: string; keyId?: string; expectedHead?: string };
}

/** A verdict: valid, or the error codes; `usage` when loopsign refused the input itself (exit 2), `unparsed` when it is not JSON. */
export interface Judged {
  valid: boolean;
  errors: string[];
  usage?: string;
  unparsed?: boolean;
}

export function differentialCorpus(): { cases: DifferentialCase[]; verdicts: Record<string, Judged> } {
  const corpus = JSON.parse(brotliDecompressSync(readFileSync(path.join(DIFFERENTIAL, 'corpus.json.br'))).toString('utf8'));
  const recorded = JSON.parse(readFileSync(path.join(DIFFERENTIAL, 'verdicts.json'), 'utf8')) as { verdicts: Record<string, string> };
  const verdicts: Record<string, Judged> = {};
  for (const [id, v] of Object.entries(recorded.verdicts)) {
    verdicts[id] =
      v === 'ok'
        ? { valid: true, errors: [] }
        : v === 'unparsed'
          ? { valid: false, errors: [], unparsed: true }
          : { valid: false, errors: v.split(',') };
  }
  return { cases: corpus.cases, verdicts };
}

/** loopsign's verdict, as `verify-evidence FILE [--audit] [--public-key PIN] [--key-id ID] [--expected-head H]` reaches it. */
export async function judgeWithLoopsign(c: DifferentialCase): Promise<Judged> {
  try {
    const doc = parseEvidenceText(c.text, 'the case');
    if (c.kind === 'audit') {
      const r = verifyAuditExport(doc, c.trust.expectedHead);
      return { valid: r.valid, errors: r.errors };
    }
    if (detectKind(doc) !== 'packet') return { valid: false, errors: [], usage: 'invalid_packet_shape' };
    const r = await verifyPacketWith(doc, { publicKey: c.trust.publicKey, keyId: c.trust.keyId });
    return { valid: r.valid, errors: r.errors };
  } catch (error) {
    if (error instanceof LoopsignError) {
      const notJson = /is not usable JSON/.test(error.message);
      return { valid: false, errors: [], usage: error.code, ...(notJson ? { unparsed: true } : {}) };
    }
    throw error;
  }
}

export type Agreement = 'agree' | 'false-ok' | 'deliberate' | 'code-difference';

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * How loopsign's verdict compares with the service's: the same (validity and codes; or both found no JSON), a false
 * ok (loopsign valid, the service not), a deliberate refusal (loopsign refuses by one of its own listed rules: its
 * own code, or refusing the input before verifying), or a code difference (both refuse, with other codes).
 */
export function compare(service: Judged, loopsign: Judged): Agreement {
  if (loopsign.valid) return service.valid ? 'agree' : 'false-ok';
  if (service.unparsed) return loopsign.unparsed ? 'agree' : 'code-difference';
  if (!service.valid && sameSet(service.errors, loopsign.usage ? [loopsign.usage] : loopsign.errors)) return 'agree';
  if (loopsign.usage !== undefined || loopsign.errors.some((e) => DELIBERATE_CODES.includes(e))) return 'deliberate';
  return 'code-difference';
}
