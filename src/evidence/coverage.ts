// Coverage exports, rateloop.assurance-coverage-export.v2 (evidence.md §12): exportDigest = sha256 over the
// RFC 8785 form of the body without exportDigest. export_digest_mismatch is loopsign's own code.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../protocol/canonical.js';

export const COVERAGE_SCHEMA = 'rateloop.assurance-coverage-export.v2';

export interface CoverageResult {
  valid: boolean;
  errors: string[];
  exportDigest?: string;
  expected?: string;
}

export function coverageDigest(body: Record<string, unknown>): string {
  const { exportDigest: _omit, ...rest } = body;
  return `sha256:${createHash('sha256').update(canonicalJson(rest), 'utf8').digest('hex')}`;
}

export function verifyCoverageExport(doc: unknown): CoverageResult {
  try {
    const d = doc as Record<string, unknown>;
    if (!d || typeof d !== 'object' || Array.isArray(d) || d.schemaVersion !== COVERAGE_SCHEMA || typeof d.exportDigest !== 'string') {
      return { valid: false, errors: ['invalid_export_shape'] };
    }
    const expected = coverageDigest(d);
    return expected === d.exportDigest
      ? { valid: true, errors: [], exportDigest: expected }
      : { valid: false, errors: ['export_digest_mismatch'], exportDigest: d.exportDigest, expected };
  } catch {
    return { valid: false, errors: ['verification_failed'] };
  }
}
