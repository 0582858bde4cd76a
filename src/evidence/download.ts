// Downloading evidence: the public trusted keys (no credential), and the workspace's run packets, audit chain and
// coverage export, which the service authenticates with a browser session cookie only (review.md §2.5, §7.2).
// Kept apart from the offline verifier so `verify-evidence` loads no HTTP client.
import { httpStatusCode, serviceCode } from '../error-codes.js';
import { CredentialError, ServiceError, UsageError } from '../errors.js';
import { HttpClient } from '../service/http.js';
import { verifyDocument, type PacketTrust, type SubjectMismatch, type VerifyOutcome } from './files.js';
import { checkTrustedKeysDocument, type TrustedKey } from './keys.js';
import { SESSION_COOKIE_NAME } from './session-cookie.js';

export function evidenceHttp(baseUrl: string): HttpClient {
  // Exports can be far larger than a plan: the cap is the local reader's (files.ts EXPORT_MAX_BYTES), not 4 MiB.
  return new HttpClient({ baseUrl, retries: 3, maxBytes: 512 * 1024 * 1024 });
}

export async function downloadTrustedKeys(http: HttpClient): Promise<{ doc: Record<string, unknown>; keys: TrustedKey[] }> {
  const doc = await http.request({ method: 'GET', path: '/api/evidence/trusted-keys', idempotent: true });
  return { doc, keys: checkTrustedKeysDocument(doc) };
}

// Ids become path segments: letters, digits and ._:- only, and never "." or ".." (which a URL resolves, encoded
// or not, by climbing the path).
const ID = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,160}$/;

function segment(value: string, flag: string): string {
  if (!ID.test(value))
    throw new UsageError('invalid_id', `${flag} ${JSON.stringify(value.slice(0, 80))} is not an id (letters, digits and ._:- only)`);
  return encodeURIComponent(value);
}

export type FetchWhat = 'run' | 'audit' | 'coverage';

export interface FetchRequest {
  what: FetchWhat;
  workspace: string;
  runId?: string;
  from?: string;
  to?: string;
}

export interface EvidenceRoute {
  request: FetchRequest;
  path: string;
  query: Record<string, string | undefined>;
  /** The file name when --out is not given. */
  defaultName: string;
}

export interface Fetched {
  kind: 'packet' | 'audit' | 'coverage';
  doc: Record<string, unknown>;
  /** What the document must name: the run or workspace that was asked for. */
  subject: SubjectMismatch;
}

/**
 * Verify a download and that it is for what was asked: a packet of another run (or an export of another
 * workspace) is refused like one that does not verify (exit 8, `run_id_mismatch` / `workspace_id_mismatch`),
 * however well it is signed.
 */
export async function verifyFetched(
  f: Fetched,
  trust: PacketTrust,
  expectedHead?: string,
): Promise<{ outcome: VerifyOutcome; mismatch?: SubjectMismatch }> {
  const outcome = await verifyDocument(f.doc, f.kind, trust, expectedHead);
  if (f.subject.actual === f.subject.expected) return { outcome };
  const code = f.subject.field === 'workspaceId' ? 'workspace_id_mismatch' : 'run_id_mismatch';
  const result = { ...outcome.result, valid: false, errors: [...outcome.result.errors, code] };
  return { outcome: { ...outcome, result } as VerifyOutcome, mismatch: f.subject };
}

/** The route for a download, from the user's ids (checked here, before any credential is read or request sent). */
export function evidenceRoute(request: FetchRequest): EvidenceRoute {
  const ws = `/api/account/workspaces/${segment(request.workspace, '--workspace')}`;
  if (request.what === 'run') {
    if (!request.runId) throw new UsageError('usage', 'evidence fetch run needs RUN_ID');
    const run = segment(request.runId, 'RUN_ID');
    return { request, path: `${ws}/assurance/runs/${run}/evidence`, query: {}, defaultName: `evidence-${request.runId}.json` };
  }
  if (request.what === 'audit') return { request, path: `${ws}/audit/export`, query: {}, defaultName: 'rateloop-audit.json' };
  return {
    request,
    path: `${ws}/assurance/coverage/export`,
    query: { from: request.from, to: request.to },
    defaultName: 'rateloop-assurance-coverage.json',
  };
}

/** GET one workspace export with the session cookie (the `Cookie` header). A 401 says which credential the route wanted. */
export async function fetchEvidence(http: HttpClient, route: EvidenceRoute, cookie: string): Promise<Fetched> {
  const { request: req, path, query } = route;
  let doc: Record<string, unknown>;
  try {
    doc = await http.request({ method: 'GET', path, headers: { cookie }, query, idempotent: true, timeoutMs: 60_000 });
  } catch (error) {
    throw error instanceof ServiceError && (error.details as { status?: number } | undefined)?.status === 401
      ? sessionRefused(error)
      : error;
  }
  if (req.what === 'run') {
    const payload = doc.payload as Record<string, unknown> | undefined;
    return { kind: 'packet', doc, subject: { field: 'payload.runId', expected: req.runId!, actual: payload?.runId } };
  }
  return {
    kind: req.what === 'audit' ? 'audit' : 'coverage',
    doc,
    subject: { field: 'workspaceId', expected: req.workspace, actual: doc.workspaceId },
  };
}

function sessionRefused(error: ServiceError): CredentialError {
  return new CredentialError(
    serviceCode(error.code) ?? httpStatusCode(401),
    `the service did not accept the session cookie (HTTP 401 ${error.code}): the workspace evidence, audit and coverage routes take the browser session cookie ${SESSION_COOKIE_NAME}, not a workspace API key`,
    {
      hint: 'sign in again in the browser (sessions last 12 hours) as a member with export rights, and copy the fresh cookie into your --session-cookie-file or --session-cookie-env variable',
      details: error.details,
    },
  );
}
