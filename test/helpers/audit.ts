// evidence.md §11.2 written out literally, for the audit-chain tests: the event digest over the legacy canonical
// form, with keys ordered by Intl.Collator('en-US') itself — independent of loopsign's canonicaliser, its key-order
// fast path and its per-event writer.
import { createHash } from 'node:crypto';

const collator = new Intl.Collator('en-US');

function legacyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(legacyJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort(collator.compare);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${legacyJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The digest of a snake_case row; `nullAs: 'string'` is the service's offline checker's form (null → "null"). */
export function specDigest(previous: string, e: any, nullAs: 'null' | 'string' = 'null'): string {
  const keep = (v: unknown) => (nullAs === 'string' && v === null ? String(v) : v);
  const P = {
    action: e.action,
    actorKind: e.actor_kind,
    actorReference: e.actor_reference,
    assuranceMethod: e.assurance_method,
    eventId: e.event_id,
    homeRegion: e.home_region,
    metadata: JSON.parse(e.metadata_json),
    occurredAt: new Date(e.occurred_at).toISOString(),
    purpose: keep(e.purpose),
    reason: keep(e.reason),
    requestCorrelation: e.request_correlation ?? null,
    result: e.result,
    targetId: keep(e.target_id),
    targetKind: e.target_kind,
    workspaceId: e.workspace_id,
    sequence: e.sequence,
  };
  return `sha256:${createHash('sha256')
    .update(`${previous}\n${legacyJson(P)}`, 'utf8')
    .digest('hex')}`;
}
