// Audit chain exports, rateloop-audit-v1 (evidence.md §11): genesis, sequence, previous digests, event digests,
// head and count. Reports the first broken link. Event digests use the legacy (localeCompare) canonical form;
// the key order of the fixed columns is computed once per key set, so long chains stay fast.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../protocol/canonical.js';

export const GENESIS_DIGEST = `sha256:${'0'.repeat(64)}`;

export interface AuditResult {
  valid: boolean;
  errors: string[];
  eventCount?: number;
  headDigest?: string;
  sequence?: number;
  detail?: string;
}

type Obj = Record<string, any>;

// Already in the form toISOString() produces: no need to re-format (it is the common case, and it is hot).
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A column in snake_case or camelCase. */
function col(e: Obj, snake: string, camel: string): unknown {
  return e[snake] !== undefined ? e[snake] : e[camel];
}

export function auditEventPayload(e: Obj): Obj {
  const metaRaw = col(e, 'metadata_json', 'metadataJson');
  const metadata = typeof metaRaw === 'string' ? JSON.parse(metaRaw) : (metaRaw ?? e.metadata ?? {});
  const occurred = col(e, 'occurred_at', 'occurredAt');
  const correlation = col(e, 'request_correlation', 'requestCorrelation');
  return {
    action: e.action,
    actorKind: col(e, 'actor_kind', 'actorKind'),
    actorReference: col(e, 'actor_reference', 'actorReference'),
    assuranceMethod: col(e, 'assurance_method', 'assuranceMethod'),
    eventId: col(e, 'event_id', 'eventId'),
    homeRegion: col(e, 'home_region', 'homeRegion'),
    metadata,
    occurredAt: ISO_MS.test(String(occurred)) ? occurred : new Date(String(occurred)).toISOString(),
    purpose: e.purpose,
    reason: e.reason,
    requestCorrelation: correlation ?? null,
    result: e.result,
    targetId: col(e, 'target_id', 'targetId'),
    targetKind: col(e, 'target_kind', 'targetKind'),
    workspaceId: col(e, 'workspace_id', 'workspaceId'),
    sequence: e.sequence,
  };
}

export function auditEventDigest(previousDigest: string, event: Obj): string {
  const text = `${previousDigest}\n${canonicalJson(auditEventPayload(event), 'locale-en-US')}`;
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

export function verifyAuditExport(doc: unknown, expectedHead?: string): AuditResult {
  try {
    const d = doc as Obj;
    if (!d || typeof d !== 'object' || Array.isArray(d) || !Array.isArray(d.events) || !d.integrity || typeof d.integrity !== 'object') {
      return { valid: false, errors: ['invalid_export_shape'], detail: 'an object with events[] and integrity is required' };
    }
    if (typeof d.workspaceId !== 'string' || d.workspaceId === '') return { valid: false, errors: ['workspace_missing'] };
    let previous = GENESIS_DIGEST;
    const events = d.events as Obj[];
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const fail = (code: string, detail: string): AuditResult => ({ valid: false, errors: [code], sequence: typeof e.sequence === 'number' ? e.sequence : i + 1, eventCount: events.length, detail });
      if (e.sequence !== i + 1) return fail('sequence_mismatch', `event ${i + 1} has sequence ${String(e.sequence)}`);
      if (col(e, 'workspace_id', 'workspaceId') !== d.workspaceId) return fail('workspace_mismatch', `event ${i + 1} belongs to another workspace`);
      if (col(e, 'previous_digest', 'previousDigest') !== previous) return fail('previous_digest_mismatch', `event ${i + 1} does not point at the event before it`);
      const digest = auditEventDigest(previous, e);
      if (col(e, 'event_digest', 'eventDigest') !== digest) return fail('event_digest_mismatch', `event ${i + 1} does not hash to its event_digest (expected ${digest})`);
      previous = digest;
    }
    const head = events.length ? previous : GENESIS_DIGEST;
    const errors: string[] = [];
    if (d.integrity.headDigest !== head || d.integrity.eventCount !== events.length) errors.push('head_mismatch');
    if (expectedHead !== undefined && expectedHead !== head) errors.push('expected_head_mismatch');
    return { valid: errors.length === 0, errors, eventCount: events.length, headDigest: head };
  } catch (error) {
    return { valid: false, errors: ['verification_failed'], detail: (error as Error).message };
  }
}
