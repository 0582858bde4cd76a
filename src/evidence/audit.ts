// Audit chain exports, rateloop-audit-v1 (evidence.md §11): genesis, sequence, previous digests, event digests,
// head and count. Reports the first broken link. Event digests use the legacy (localeCompare) canonical form.
// Long chains must verify at 100,000+ events a second: the payload's sixteen keys never change, so their legacy
// order is computed once and each event is written straight into it; only the metadata object goes through the
// general canonicalizer, and the hash is node's one-shot SHA-256.
import { hash } from 'node:crypto';
import { canonicalJson, canonicalString, legacyCompare } from '../protocol/canonical.js';
import { isDoc, type ServiceDoc } from '../service/doc.js';

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

// An event or export as read: every field unknown until checked (src/service/doc.ts).
type Obj = ServiceDoc;
/** An event's payload, as it is hashed. */
type Payload = Record<string, unknown>;

// Already in the form toISOString() produces: no need to re-format (it is the common case, and it is hot).
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A column in snake_case or camelCase. */
function col(e: Obj, snake: string, camel: string): unknown {
  return e[snake] !== undefined ? e[snake] : e[camel];
}

export function auditEventPayload(e: Obj): Payload {
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
const PAYLOAD_ORDER = [
  'action',
  'actorKind',
  'actorReference',
  'assuranceMethod',
  'eventId',
  'homeRegion',
  'metadata',
  'occurredAt',
  'purpose',
  'reason',
  'requestCorrelation',
  'result',
  'targetId',
  'targetKind',
  'workspaceId',
  'sequence',
]
  .sort(legacyCompare)
  .map((key) => ({ key, prefix: `"${key}":` }));

/** legacyCanonical(P): the same text as canonicalJson(payload, 'locale-en-US'), without sorting keys per event. */
function legacyCanonicalPayload(payload: Payload): string {
  let out = '{';
  for (const { key, prefix } of PAYLOAD_ORDER) {
    const value = payload[key];
    if (value === undefined) continue; // as JSON (and canonicalJson) leaves it out
    out +=
      (out.length > 1 ? ',' : '') + prefix + (typeof value === 'string' ? canonicalString(value) : canonicalJson(value, 'locale-en-US'));
  }
  return out + '}';
}

function digestOf(previousDigest: string, payload: Payload): string {
  return `sha256:${hash('sha256', `${previousDigest}\n${legacyCanonicalPayload(payload)}`, 'hex')}`;
}

export function auditEventDigest(previousDigest: string, event: Obj): string {
  return digestOf(previousDigest, auditEventPayload(event));
}

// evidence.md §11.2 pitfall: the service's offline checker turns null purpose/reason/targetId into "null" with
// String(); the server keeps null, and so does loopsign. The difference is reported, never silently absorbed.
const STRINGIFIED_BY_SERVICE_CHECKER = ['purpose', 'reason', 'targetId'] as const;

function hasNullColumn(payload: Payload): boolean {
  // A plain loop over the one list: this runs once per event and allocates nothing.
  for (const k of STRINGIFIED_BY_SERVICE_CHECKER) if (payload[k] === null) return true;
  return false;
}

function nullColumns(payload: Payload): string[] {
  return STRINGIFIED_BY_SERVICE_CHECKER.filter((k) => payload[k] === null);
}

function stringified(payload: Payload): Payload {
  const copy = { ...payload };
  for (const k of STRINGIFIED_BY_SERVICE_CHECKER) if (copy[k] === null) copy[k] = 'null';
  return copy;
}

/** Why a document is no audit export at all, checked before any event (the service verifier's order). */
export function exportShapeFailure(d: unknown): AuditResult | undefined {
  if (!isDoc(d)) return { valid: false, errors: ['invalid_export_shape'], detail: 'an audit export is a JSON object' };
  // Another format is refused before anything else, with the service verifier's code (evidence.md §11.3).
  if (d.format !== AUDIT_FORMAT) {
    return {
      valid: false,
      errors: ['invalid_export_shape'],
      detail: `format ${JSON.stringify(d.format ?? null)} is not ${AUDIT_FORMAT}; loopsign verifies only that format`,
    };
  }
  if (!Array.isArray(d.events) || !d.integrity || typeof d.integrity !== 'object') {
    return { valid: false, errors: ['invalid_export_shape'], detail: 'an object with events[] and integrity is required' };
  }
  if (typeof d.workspaceId !== 'string' || d.workspaceId === '') return { valid: false, errors: ['workspace_missing'] };
  return undefined;
}

/** The first failing event: its index, the step of the per-event checks that failed (0 sequence … 3 digest), and what to report. */
export interface LinkFailure {
  index: number;
  step: number;
  code: string;
  detail: string;
  /** The event's sequence, as reported (absent for verification_failed). */
  sequence?: number;
  note?: string;
}

const workspaceMismatch = (i: number): LinkFailure => ({
  index: i,
  step: 1,
  code: 'workspace_mismatch',
  detail: `event ${i + 1} belongs to another workspace`,
  sequence: i + 1,
});
const previousMismatch = (i: number): LinkFailure => ({
  index: i,
  step: 2,
  code: 'previous_digest_mismatch',
  detail: `event ${i + 1} does not point at the event before it`,
  sequence: i + 1,
});

/**
 * What checking a run of consecutive events found. The whole chain is one run (verifyAuditExport); a streamed
 * export is checked in batches, each a run checked on its own (possibly in a worker), then joined in order by
 * joinRuns: a batch is given neither the previous digest nor the workspace, so it reports its first event's
 * previous_digest and its workspaces for the join to check.
 */
export interface RunCheck {
  /** The first event of the run that failed the checks the run could make; nothing after it was checked. */
  failure?: LinkFailure;
  /** The digest computed for the last event checked: what the next event must point at. */
  head: string;
  /** The first event's previous_digest, when the run was not given the previous digest. */
  firstPrevious?: unknown;
  /** When the run was not given the workspace: the first event's, and the index of the first event with another. */
  firstWorkspace?: unknown;
  otherWorkspaceAt?: number;
  withNulls: number;
  /** The index of the first event with a null purpose, reason or targetId. */
  firstWithNulls?: number;
}

/**
 * Check events[0..] as the events at index `start` onward, link by link and in the reference order per event:
 * sequence, workspace, previous digest, event digest. Without `previous` the first event's previous digest is not
 * checked (the event's own is used to hash it); without `workspaceId` no workspace is checked, only reported.
 * Nothing is allocated per event beyond the payload and its text: this loop runs 100,000+ times a second.
 */
export function checkRun(
  events: readonly unknown[],
  start: number,
  previous: string | undefined,
  workspaceId: string | undefined,
): RunCheck {
  const run: RunCheck = { head: previous ?? GENESIS_DIGEST, withNulls: 0 };
  let last = previous;
  let i = start;
  let step = 0;
  const fail = (e: Obj, code: string, detail: string, note?: string): RunCheck => {
    run.failure = {
      index: i,
      step,
      code,
      detail,
      sequence: typeof e.sequence === 'number' ? e.sequence : i + 1,
      ...(note ? { note } : {}),
    };
    return run;
  };
  try {
    for (let k = 0; k < events.length; k++) {
      i = start + k;
      step = 0;
      const item = events[k];
      // No event can be null (reading it was always a verification failure); any other non-object has none of an
      // event's fields, as {} has none.
      if (item === null || item === undefined) throw new Error(`event ${i + 1} is ${String(item)}, not an object`);
      const e: Obj = isDoc(item) ? item : {};
      if (e.sequence !== i + 1) return fail(e, 'sequence_mismatch', `event ${i + 1} has sequence ${String(e.sequence)}`);
      step = 1;
      const ws = col(e, 'workspace_id', 'workspaceId');
      if (workspaceId !== undefined) {
        if (ws !== workspaceId) return { ...run, failure: workspaceMismatch(i) };
      } else if (k === 0) run.firstWorkspace = ws;
      else if (run.otherWorkspaceAt === undefined && ws !== run.firstWorkspace) run.otherWorkspaceAt = i;
      step = 2;
      const claimedPrevious = col(e, 'previous_digest', 'previousDigest');
      if (last === undefined) run.firstPrevious = claimedPrevious;
      else if (claimedPrevious !== last) return { ...run, failure: previousMismatch(i) };
      step = 3;
      // Unchecked only for a batch's first event, whose link the join checks: hashed with the digest it claims.
      const hashedOn = last ?? (claimedPrevious as string);
      const payload = auditEventPayload(e);
      const digest = digestOf(hashedOn, payload);
      const claimed = col(e, 'event_digest', 'eventDigest');
      const nulls = hasNullColumn(payload);
      if (claimed !== digest) {
        const note =
          nulls && claimed === digestOf(hashedOn, stringified(payload))
            ? `event ${i + 1} hashes only with its null ${nullColumns(payload).join('/')} written as "null" (the service's offline checker's form); the server keeps null, so loopsign does too`
            : undefined;
        return fail(e, 'event_digest_mismatch', `event ${i + 1} does not hash to its event_digest (expected ${digest})`, note);
      }
      if (nulls && run.withNulls++ === 0) run.firstWithNulls = i;
      last = run.head = digest;
    }
  } catch (error) {
    run.failure = { index: i, step, code: 'verification_failed', detail: (error as Error).message };
  }
  return run;
}

/** The result for a chain whose first failure is `f`, among `eventCount` events. */
export function failureResult(f: LinkFailure, eventCount: number): AuditResult {
  if (f.code === 'verification_failed') return { valid: false, errors: ['verification_failed'], detail: f.detail };
  return { valid: false, errors: [f.code], sequence: f.sequence, eventCount, detail: f.detail, ...(f.note ? { note: f.note } : {}) };
}

/** The result for a chain whose every link held: its head and count against the export's integrity and the expected head. */
export function chainResult(
  d: Obj,
  head: string,
  eventCount: number,
  withNulls: number,
  firstWithNulls: number | undefined,
  expectedHead?: string,
): AuditResult {
  const errors: string[] = [];
  // exportShapeFailure let through an integrity that is an object or an array: an array has none of these fields.
  const integrity: Obj = isDoc(d.integrity) ? d.integrity : {};
  if (integrity.valid !== true || integrity.headDigest !== head || integrity.eventCount !== eventCount) errors.push('head_mismatch');
  if (expectedHead !== undefined && expectedHead !== head) errors.push('expected_head_mismatch');
  const note =
    withNulls > 0
      ? `${withNulls} event(s), first event ${firstWithNulls! + 1}, have null purpose, reason or targetId; they verify as the server hashes them (null kept), while the service's offline checker, which writes them as "null", would report event_digest_mismatch`
      : undefined;
  return { valid: errors.length === 0, errors, eventCount, headDigest: head, ...(note ? { note } : {}) };
}

/** The reference implementation: the whole export in memory, every link checked in order on this thread. */
export function verifyAuditExport(doc: unknown, expectedHead?: string): AuditResult {
  try {
    const shape = exportShapeFailure(doc);
    if (shape) return shape;
    // What exportShapeFailure has just checked, said again for the compiler.
    if (!isDoc(doc)) throw new Error('unreachable: the export shape was checked');
    const events: unknown = doc.events;
    const workspaceId = doc.workspaceId;
    if (!Array.isArray(events) || typeof workspaceId !== 'string') throw new Error('unreachable: the export shape was checked');
    const run = checkRun(events, 0, GENESIS_DIGEST, workspaceId);
    if (run.failure) return failureResult(run.failure, events.length);
    return chainResult(doc, run.head, events.length, run.withNulls, run.firstWithNulls, expectedHead);
  } catch (error) {
    return { valid: false, errors: ['verification_failed'], detail: (error as Error).message };
  }
}

/**
 * Join the runs of a streamed export, in order, into what checkRun over all its events would have found: each
 * batch's first previous digest is checked against the digest before it, and its workspaces against the export's.
 * At one event the earliest step wins, as in checkRun.
 */
export function joinRuns(runs: readonly { start: number; count: number; run: RunCheck }[], workspaceId: string): RunCheck {
  const joined: RunCheck = { head: GENESIS_DIGEST, withNulls: 0 };
  for (const { start, count, run } of runs) {
    // Failures the batch could not see (at the first event whose check failed in the batch, or before it); the
    // first event's reported workspace and previous digest are set only when its earlier checks passed, and
    // otherwise lose to the batch's own failure at that event (an earlier step).
    const found: LinkFailure[] = run.failure ? [run.failure] : [];
    if (count > 0) {
      const wsAt = run.firstWorkspace === workspaceId ? run.otherWorkspaceAt : start;
      if (wsAt !== undefined) found.push(workspaceMismatch(wsAt));
      if (run.firstPrevious !== joined.head) found.push(previousMismatch(start));
    }
    const first = found.sort((a, b) => a.index - b.index || a.step - b.step)[0];
    if (first) return { ...joined, failure: first };
    if (run.withNulls > 0 && joined.withNulls === 0) joined.firstWithNulls = run.firstWithNulls;
    joined.withNulls += run.withNulls;
    if (count > 0) joined.head = run.head;
  }
  return joined;
}
