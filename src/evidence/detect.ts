// Which kind of evidence file a document is, from its content.
export type EvidenceKind = 'packet' | 'audit' | 'coverage' | 'trusted-keys' | 'unknown';

export function detectKind(doc: unknown): EvidenceKind {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'unknown';
  const d = doc as Record<string, unknown>;
  if ('payload' in d && 'signing' in d) return 'packet';
  if (d.format === 'rateloop-audit-v1' || (Array.isArray(d.events) && 'integrity' in d)) return 'audit';
  if (typeof d.schemaVersion === 'string' && d.schemaVersion.startsWith('rateloop.assurance-coverage-export')) return 'coverage';
  if (typeof d.schemaVersion === 'string' && d.schemaVersion.includes('trusted-key')) return 'trusted-keys';
  return 'unknown';
}
