// The exact forms of the identifiers of the workspace review surface (review.md §1.2). Anything the service returns
// is checked against its form before loopsign prints it in a `next` command or a hint — an agent runs `next` — or
// uses it in a path; a value the user gives is checked before anything is sent.
import type { UsageCode } from '../error-codes.js';
import { RefusedError, UsageError } from '../errors.js';

export const ID_FORMS = {
  workspace: { re: /^ws_[0-9a-f]{32}$/, form: 'ws_ + 32 hex' },
  project: { re: /^hap_[0-9a-f]{32}$/, form: 'hap_ + 32 hex' },
  privateReview: { re: /^hpr_[0-9a-f]{32}$/, form: 'hpr_ + 32 hex' },
  artifact: { re: /^art_[0-9a-f]{32}$/, form: 'art_ + 32 hex' },
  opportunity: { re: /^aop_[0-9a-f]{40}$/, form: 'aop_ + 40 hex' },
  scope: { re: /^evs_[0-9a-f]{40}$/, form: 'evs_ + 40 hex' },
  // Runs are created as hau_ + 32 hex; a run projected from a private review delivery is hau_ + 40 hex (the
  // service's directPrivateReviewEvidence.ts). review.md §1.2 names neither.
  run: { re: /^hau_[0-9a-f]{32}(?:[0-9a-f]{8})?$/, form: 'hau_ + 32 or 40 hex' },
  sha256: { re: /^sha256:[0-9a-f]{64}$/, form: 'sha256: + 64 lower-case hex' },
  gateKey: { re: /^ed25519:[0-9a-f]{24}$/, form: 'ed25519: + 24 hex' },
  // Owner-configured ids (integration, request profile, cohort) have no published form: the safe characters only.
  configured: { re: /^[A-Za-z0-9][A-Za-z0-9._:-]{0,159}$/, form: 'letters, digits and ._:- (1 … 160)' },
} as const;

export type IdKind = keyof typeof ID_FORMS;

export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && ID_FORMS[kind].re.test(value);
}

/** The code for each kind of id a user gives (docs/errors.md). */
const USER_ID_CODES = {
  configured: 'invalid_configured_id',
  opportunity: 'invalid_opportunity_id',
  project: 'invalid_project_id',
  run: 'invalid_run_id',
  scope: 'invalid_scope_id',
} as const satisfies Partial<Record<IdKind, UsageCode>>;

/** A value the user gave: exit 2 when it is not in its form. */
export function userId(kind: keyof typeof USER_ID_CODES, value: unknown, what: string): string {
  if (isId(kind, value)) return value;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : String(value);
  throw new UsageError(
    USER_ID_CODES[kind],
    `${what} ${shown} is not a ${kind === 'configured' ? 'valid id' : `${kind} id`} (${ID_FORMS[kind].form})`,
  );
}

/** A value the service returned: refused (exit 5) when it is not in its form, so it never reaches a command line. */
export function serviceId(kind: IdKind, value: unknown, where: string): string {
  if (isId(kind, value)) return value;
  throw new RefusedError(
    'malformed_service_id',
    `the service returned ${where} ${JSON.stringify(String(value).slice(0, 80))}, which is not a ${kind} id (${ID_FORMS[kind].form}); nothing was done with it`,
  );
}
