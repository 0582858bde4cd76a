// Audit chain exports, rateloop-audit-v1 (evidence.md §11): genesis, sequence, previous digests, event digests,
// head and count. Reports the first broken link. Event digests use the legacy (localeCompare) canonical form.
// Long chains must verify at 100,000+ events a second: the payload's sixteen keys never change, so their legacy
// order is computed once and each event is written straight into it; only the metadata object goes through the
// general canonicalizer, and the hash is node's one-shot SHA-256.
import { hash } from 'node:crypto';
import { canonicalJson, canonicalString } from '../protocol/canonical.js';

export const GENESIS_DIGEST = `sha256:${'0'.repeat(64)}`;
export const AUDIT_FORMAT = 'rateloop-audit-v1';

export interface AuditResult {
  valid: boolean;
  errors: string[];
  eventCount?: number;
  headDigest?: string;
  sequence?: number;
  detail?: string;
  /** Where this result differs from the service's offline checker, and why (evidence.md §11.2). */
  note?: string;
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

// The payload's keys in the legacy order (en-US collation), each with its JSON prefix.
const PAYLOAD_ORDER = ['action', 'actorKind', 'actorReference', 'assuranceMethod', 'eventId', 'homeRegion', 'metadata', 'occurredAt', 'purpose', 'reason', 'requestCorrelation', 'result', 'targetId', 'targetKind', 'workspaceId', 'sequence']
  .sort(new Intl.Collator('en-US').compare)
  .map((key) => ({ key, prefix: `"${key}":` }));

/** legacyCanonical(P): the same text as canonicalJson(payload, 'locale-en-US'), without sorting keys per event. */
function legacyCanonicalPayload(payload: Obj): string {
  let out = '{';
  for (const { key, prefix } of PAYLOAD_ORDER) {
    const value = payload[key];
    if (value === undefined) continue; // as JSON (and canonicalJson) leaves it out
    out += (out.length > 1 ? ',' : '') + prefix + (typeof value === 'string' ? canonicalString(value) : canonicalJson(value, 'locale-en-US'));
  }
  return out + '}';
}

function digestOf(previousDigest: string, payload: Obj): string {
  return `sha256:${hash('sha256', `${previousDigest}\n${legacyCanonicalPayload(payload)}`, 'hex')}`;
}

export function auditEventDigest(previousDigest: string, event: Obj): string {
  return digestOf(previousDigest, auditEventPayload(event));
}

// evidence.md §11.2 pitfall: the service's offline checker turns null purpose/reason/targetId into "null" with
// String(); the server keeps null, and so does loopsign. The difference is reported, never silently absorbed.
const STRINGIFIED_BY_SERVICE_CHECKER = ['purpose', 'reason', 'targetId'] as const;

function hasNullColumn(payload: Obj): boolean {
  // A plain loop over the one list: this runs once per event and allocates nothing.
  for (const k of STRINGIFIED_BY_SERVICE_CHECKER) if (payload[k] === null) return true;
  return false;
}

function nullColumns(payload: Obj): string[] {
  return STRINGIFIED_BY_SERVICE_CHECKER.filter((k) => payload[k] === null);
}

function stringified(payload: Obj): Obj {
  const copy = { ...payload };
  for (const k of STRINGIFIED_BY_SERVICE_CHECKER) if (copy[k] === null) copy[k] = 'null';
  return copy;
}

export function verifyAuditExport(doc: unknown, expectedHead?: string): AuditResult {
  try {
    const d = doc as Obj;
    if (!d || typeof d !== 'object' || Array.isArray(d)) return { valid: false, errors: ['invalid_export_shape'], detail: 'an audit export is a JSON object' };
    // Another format is refused before anything else, with the service verifier's code (evidence.md §11.3).
    if (d.format !== AUDIT_FORMAT) {
      return { valid: false, errors: ['invalid_export_shape'], detail: `format ${JSON.stringify(d.format ?? null)} is not ${AUDIT_FORMAT}; loopsign verifies only that format` };
    }
    if (!Array.isArray(d.events) || !d.integrity || typeof d.integrity !== 'object') {
      return { valid: false, errors: ['invalid_export_shape'], detail: 'an object with events[] and integrity is required' };
    }
    if (typeof d.workspaceId !== 'string' || d.workspaceId === '') return { valid: false, errors: ['workspace_missing'] };
    let previous = GENESIS_DIGEST;
    const events = d.events as Obj[];
    let withNulls = 0;
    let firstWithNulls = 0;
    // Nothing is allocated per event beyond the payload and its text: this loop runs 100,000+ times a second.
    const fail = (i: number, code: string, detail: string, note?: string): AuditResult => ({
      valid: false,
      errors: [code],
      sequence: typeof events[i]!.sequence === 'number' ? events[i]!.sequence : i + 1,
      eventCount: events.length,
      detail,
      ...(note ? { note } : {}),
    });
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (e.sequence !== i + 1) return fail(i, 'sequence_mismatch', `event ${i + 1} has sequence ${String(e.sequence)}`);
      if (col(e, 'workspace_id', 'workspaceId') !== d.workspaceId) return fail(i, 'workspace_mismatch', `event ${i + 1} belongs to another workspace`);
      if (col(e, 'previous_digest', 'previousDigest') !== previous) return fail(i, 'previous_digest_mismatch', `event ${i + 1} does not point at the event before it`);
      const payload = auditEventPayload(e);
      const digest = digestOf(previous, payload);
      const claimed = col(e, 'event_digest', 'eventDigest');
      const nulls = hasNullColumn(payload);
      if (claimed !== digest) {
        const note =
          nulls && claimed === digestOf(previous, stringified(payload))
            ? `event ${i + 1} hashes only with its null ${nullColumns(payload).join('/')} written as "null" (the service's offline checker's form); the server keeps null, so loopsign does too`
            : undefined;
        return fail(i, 'event_digest_mismatch', `event ${i + 1} does not hash to its event_digest (expected ${digest})`, note);
      }
      if (nulls && withNulls++ === 0) firstWithNulls = i + 1;
      previous = digest;
    }
    const head = events.length ? previous : GENESIS_DIGEST;
    const errors: string[] = [];
    if (d.integrity.valid !== true || d.integrity.headDigest !== head || d.integrity.eventCount !== events.length) errors.push('head_mismatch');
    if (expectedHead !== undefined && expectedHead !== head) errors.push('expected_head_mismatch');
    const note =
      withNulls > 0
        ? `${withNulls} event(s), first event ${firstWithNulls}, have null purpose, reason or targetId; they verify as the server hashes them (null kept), while the service's offline checker, which writes them as "null", would report event_digest_mismatch`
        : undefined;
    return { valid: errors.length === 0, errors, eventCount: events.length, headDigest: head, ...(note ? { note } : {}) };
  } catch (error) {
    return { valid: false, errors: ['verification_failed'], detail: (error as Error).message };
  }
}
