// Audit chain exports, rateloop-audit-v1 (evidence.md §11): genesis, sequence, previous digests, event digests,
// head and count. Reports the first broken link. Event digests use the legacy (localeCompare) canonical form.
// Long chains must verify at 100,000+ events a second: the payload's sixteen keys never change, so their legacy
// order is computed once and each event is written straight into it; only the metadata object goes through the
// general canonicalizer, and the hash is node's one-shot SHA-256.
import { hash } from 'node:crypto';
import { CanonicalizationError, canonicalJson, canonicalString, legacyCompare } from '../protocol/canonical.js';
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
}

// An event or export as read: every field unknown until checked (src/service/doc.ts).
type Obj = ServiceDoc;
/** An event's payload, as it is hashed. */
type Payload = Record<string, unknown>;

// Already in the form toISOString() produces: no need to re-format (it is the common case, and it is hot).
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// The string columns, in camelCase and snake_case. An event spells each one way: either spelling is read, both is
// refused (the service's checker reads camelCase first, loopsign once read snake_case first: the same export could
// show two readers two actors). requestCorrelation (a string, or null/absent), metadata and sequence are read apart.
const STRING_COLUMNS = [
  ['eventId', 'event_id'],
  ['workspaceId', 'workspace_id'],
  ['previousDigest', 'previous_digest'],
  ['eventDigest', 'event_digest'],
  ['homeRegion', 'home_region'],
  ['actorKind', 'actor_kind'],
  ['actorReference', 'actor_reference'],
  ['assuranceMethod', 'assurance_method'],
  ['action', 'action'],
  ['targetKind', 'target_kind'],
  ['targetId', 'target_id'],
  ['purpose', 'purpose'],
  ['reason', 'reason'],
  ['result', 'result'],
  ['occurredAt', 'occurred_at'],
] as const;
// Every column read by spelling: the string columns, then requestCorrelation and metadata (metadata_json).
const SPELLINGS: readonly (readonly [string, string])[] = [
  ...STRING_COLUMNS,
  ['requestCorrelation', 'request_correlation'],
  ['metadata', 'metadata_json'],
];
/** The index in SPELLINGS of each spelling: one pass over an event's own keys finds every column and any spelled twice. */
const COLUMN_INDEX = new Map<string, number>(SPELLINGS.flatMap(([camel, snake], i) => [[camel, i] as const, [snake, i] as const]));
// Reused by every call (one event at a time on a thread): the key each column was found under, and its value.
const foundKey: (string | undefined)[] = new Array(SPELLINGS.length);
const foundValue: unknown[] = new Array(SPELLINGS.length);

/** A column's value (the strict reading has shown it is spelled one way). */
function col(e: Obj, snake: string, camel: string): unknown {
  return e[snake] !== undefined ? e[snake] : e[camel];
}

/** What the strict reading of an event refuses with loopsign's own code (evidence.md, "Deliberate refusals"). */
interface EventRefusal {
  code: 'malformed_field' | 'ambiguous_column' | 'lone_surrogate';
  detail: string;
}

const kindOf = (v: unknown): string =>
  v === undefined ? 'missing' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
const validDate = (v: unknown): boolean => Number.isFinite(new Date(String(v)).getTime());
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const digits = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + s.charCodeAt(i) - 48;
  return n;
};
/**
 * A time toISOString() writes back unchanged: the ISO_MS form with every field in range (February 29 in leap years
 * only). Checked without a Date, which costs microseconds an event; anything else goes the slow way, through one.
 */
function canonicalTime(v: unknown): boolean {
  if (typeof v !== 'string' || !ISO_MS.test(v)) return false;
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 7);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  const day = digits(v, 8, 10);
  return (
    month >= 1 && month <= 12 && day >= 1 && day <= days && digits(v, 11, 13) <= 23 && digits(v, 14, 16) <= 59 && digits(v, 17, 19) <= 59
  );
}
/** A safe integer of 1 or more once the service's checker has applied Number() to it. */
const coercibleSequence = (v: unknown): boolean => {
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 1;
};

/**
 * The strict reading of event n (1-based), before any of its checks: each column spelled once and of its one type —
 * a string (requestCorrelation: a string or null), metadata an object (metadata) or the text of one (metadata_json),
 * the time in the form toISOString() writes, the sequence a number. Refused here (loopsign's own codes) is what
 * the service's checker would coerce and accept (String(), Number(), new Date()); what it refuses itself is left
 * to the checks after, which give its code.
 */
export function eventRefusal(e: Obj, n: number): EventRefusal | undefined {
  // One pass over the event's keys (a lookup of each of 31 spellings, most of them absent, cost more than the rest
  // of the reading together).
  foundKey.fill(undefined);
  foundValue.fill(undefined);
  for (const key in e) {
    const i = COLUMN_INDEX.get(key);
    if (i === undefined) continue;
    const seen = foundKey[i];
    if (seen !== undefined)
      return { code: 'ambiguous_column', detail: `event ${n} has both ${seen} and ${key}; an event spells each column one way` };
    foundKey[i] = key;
    foundValue[i] = e[key];
  }
  for (let i = 0; i < STRING_COLUMNS.length; i++) {
    const v = foundValue[i];
    const [camel, snake] = STRING_COLUMNS[i]!;
    if (typeof v === 'string') {
      if (!v.isWellFormed())
        return { code: 'lone_surrogate', detail: `event ${n}: ${snake} holds a lone surrogate, which no UTF-8 text can carry` };
      continue;
    }
    // A time the checker cannot read is its own refusal (verification_failed, below).
    if (camel === 'occurredAt' && !validDate(v)) continue;
    const nulls = camel === 'purpose' || camel === 'reason' || camel === 'targetId';
    return {
      code: 'malformed_field',
      detail: `event ${n}: ${snake} is ${kindOf(v)}, not a string${
        v === null && nulls
          ? ` (the server hashes null, the service's offline checker "null": no verifier of the service stands behind this digest)`
          : ` (the service's offline checker would hash String(${snake}))`
      }`,
    };
  }
  // What the pass above found (the columns' last three: occurred_at, request_correlation, metadata).
  const occurred = foundValue[SPELLINGS.length - 3];
  // Not a time at all is the checker's own refusal: verification_failed, as the payload is built.
  if (!canonicalTime(occurred) && validDate(occurred))
    return {
      code: 'malformed_field',
      detail: `event ${n}: occurred_at ${JSON.stringify(occurred)} is not in the form toISOString() writes (2026-01-31T12:00:00.000Z)`,
    };
  const correlation = foundValue[SPELLINGS.length - 2];
  if (correlation !== undefined && correlation !== null && typeof correlation !== 'string')
    return { code: 'malformed_field', detail: `event ${n}: request_correlation is ${kindOf(correlation)}, not a string or null` };
  if (typeof e.sequence !== 'number' && coercibleSequence(e.sequence))
    return { code: 'malformed_field', detail: `event ${n}: sequence is ${kindOf(e.sequence)}, not a number` };
  const metadata = foundValue[SPELLINGS.length - 1];
  if (foundKey[SPELLINGS.length - 1] === 'metadata' ? typeof metadata === 'string' && isDoc(parsedOrUndefined(metadata)) : isDoc(metadata))
    return {
      code: 'malformed_field',
      detail: `event ${n}: ${foundKey[SPELLINGS.length - 1]} is ${kindOf(metadata)}; metadata is an object, metadata_json the JSON text of one`,
    };
  return undefined;
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Event n's metadata object: the object, or parsed from its text; anything else is the checker's exception too. */
function metadataOf(e: Obj, n: number): Obj {
  if (isDoc(e.metadata)) return e.metadata;
  if (typeof e.metadata_json === 'string') {
    const parsed: unknown = JSON.parse(e.metadata_json);
    if (isDoc(parsed)) return parsed;
    throw new Error(`event ${n}: metadata_json is not the text of a JSON object`);
  }
  throw new Error(`event ${n}: metadata is ${kindOf(e.metadata ?? e.metadata_json)}, not an object`);
}

/** The payload of an event the strict reading accepted (evidence.md §11.2), as it is hashed. */
export function auditEventPayload(e: Obj, n = typeof e.sequence === 'number' ? e.sequence : 0): Payload {
  const occurred = col(e, 'occurred_at', 'occurredAt');
  if (!canonicalTime(occurred) && !validDate(occurred)) throw new Error(`event ${n}: occurred_at is not a time`);
  return {
    action: e.action,
    actorKind: col(e, 'actor_kind', 'actorKind'),
    actorReference: col(e, 'actor_reference', 'actorReference'),
    assuranceMethod: col(e, 'assurance_method', 'assuranceMethod'),
    eventId: col(e, 'event_id', 'eventId'),
    homeRegion: col(e, 'home_region', 'homeRegion'),
    metadata: metadataOf(e, n),
    occurredAt: occurred,
    purpose: e.purpose,
    reason: e.reason,
    requestCorrelation: col(e, 'request_correlation', 'requestCorrelation') ?? null,
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
  if (d.workspaceId === undefined || d.workspaceId === null || d.workspaceId === '') return { valid: false, errors: ['workspace_missing'] };
  // [loopsign] Not coerced: the service's checker would compare String(workspaceId).
  if (typeof d.workspaceId !== 'string')
    return { valid: false, errors: ['malformed_field'], detail: `workspaceId is ${kindOf(d.workspaceId)}, not a string` };
  return undefined;
}

/** The first failing event: its index, the step of the per-event checks that failed (0 reading and sequence … 3 digest), and what to report. */
export interface LinkFailure {
  index: number;
  step: number;
  code: string;
  detail: string;
  /** The event's sequence, as reported (absent for verification_failed). */
  sequence?: number;
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
}

/**
 * Check events[0..] as the events at index `start` onward, link by link and in the reference order per event:
 * the strict reading (eventRefusal) and the sequence, workspace, previous digest, event digest. Without `previous`
 * the first event's previous digest is not checked (the event's own is used to hash it); without `workspaceId` no
 * workspace is checked, only reported. Nothing is allocated per event beyond the payload and its text: this loop
 * runs 100,000+ times a second.
 */
export function checkRun(
  events: readonly unknown[],
  start: number,
  previous: string | undefined,
  workspaceId: string | undefined,
): RunCheck {
  const run: RunCheck = { head: previous ?? GENESIS_DIGEST };
  let last = previous;
  let i = start;
  let step = 0;
  const fail = (e: Obj, code: string, detail: string): RunCheck => {
    run.failure = { index: i, step, code, detail, sequence: typeof e.sequence === 'number' ? e.sequence : i + 1 };
    return run;
  };
  try {
    for (let k = 0; k < events.length; k++) {
      i = start + k;
      step = 0;
      const item = events[k];
      // An event that is not an object has none of an event's fields: the service's checker fails on it.
      if (!isDoc(item)) throw new Error(`event ${i + 1} is ${kindOf(item)}, not an object`);
      const e: Obj = item;
      const refusal = eventRefusal(e, i + 1);
      if (refusal) return fail(e, refusal.code, refusal.detail);
      if (!Number.isSafeInteger(e.sequence) || (e.sequence as number) < 1)
        throw new Error(
          `event ${i + 1}: sequence is ${typeof e.sequence === 'number' ? String(e.sequence) : kindOf(e.sequence)}, not a positive integer`,
        );
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
      const digest = digestOf(hashedOn, auditEventPayload(e, i + 1));
      if (col(e, 'event_digest', 'eventDigest') !== digest)
        return fail(e, 'event_digest_mismatch', `event ${i + 1} does not hash to its event_digest (expected ${digest})`);
      last = run.head = digest;
    }
  } catch (error) {
    // A lone surrogate in the metadata (one in a column is found by eventRefusal), found as it is canonicalised:
    // loopsign's own refusal (the service's legacy form would escape it), at the event it is in.
    const surrogate = error instanceof CanonicalizationError && /lone surrogate/.test(error.message);
    run.failure = surrogate
      ? {
          index: i,
          step,
          code: 'lone_surrogate',
          detail: `event ${i + 1}: its metadata holds a lone surrogate, which no UTF-8 text can carry`,
          sequence: i + 1,
        }
      : { index: i, step, code: 'verification_failed', detail: (error as Error).message };
  }
  return run;
}

/** The result for a chain whose first failure is `f`, among `eventCount` events. */
export function failureResult(f: LinkFailure, eventCount: number): AuditResult {
  if (f.code === 'verification_failed') return { valid: false, errors: ['verification_failed'], detail: f.detail };
  return { valid: false, errors: [f.code], sequence: f.sequence, eventCount, detail: f.detail };
}

/** The result for a chain whose every link held: its head and count against the export's integrity and the expected head. */
export function chainResult(d: Obj, head: string, eventCount: number, expectedHead?: string): AuditResult {
  // exportShapeFailure let through an integrity that is an object or an array: an array has none of these fields.
  const integrity: Obj = isDoc(d.integrity) ? d.integrity : {};
  // [loopsign] Read strictly too: a count that is not a number, a head that is not a string (the service's checker
  // would compare Number(count) and String(head)).
  for (const [key, type] of [
    ['eventCount', 'number'],
    ['headDigest', 'string'],
  ] as const) {
    const v = integrity[key];
    if (v !== undefined && typeof v !== type)
      return {
        valid: false,
        errors: ['malformed_field'],
        eventCount,
        headDigest: head,
        detail: `integrity.${key} is ${kindOf(v)}, not a ${type}`,
      };
  }
  const errors: string[] = [];
  if (integrity.valid !== true || integrity.headDigest !== head || integrity.eventCount !== eventCount) errors.push('head_mismatch');
  if (expectedHead !== undefined && expectedHead !== head) errors.push('expected_head_mismatch');
  return { valid: errors.length === 0, errors, eventCount, headDigest: head };
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
    return chainResult(doc, run.head, events.length, expectedHead);
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
  const joined: RunCheck = { head: GENESIS_DIGEST };
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
    if (count > 0) joined.head = run.head;
  }
  return joined;
}
