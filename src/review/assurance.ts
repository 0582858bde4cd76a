// The assurance HTTP routes /api/agent/v1/assurance/… (review.md §6, §7.3) over the service client (src/service/http.ts).
// They take only a workspace API key (`rlk_…`) — the private-review route also a connected agent token — answer in
// the tokenless envelope {code, message, retryable[, field]} (a missing `retryable` is false) and have no rate
// limit. Reads are retried; creating a project is not (the service has no idempotency for it); a private review is
// retried only as the identical request under its idempotency key.
import { httpStatusCode, serviceCode } from '../error-codes.js';
import { CredentialError, LoopsignError, RefusedError, ServiceError, UsageError } from '../errors.js';
import type { Output } from '../output.js';
import { arrayField, integerField, isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import { HttpClient } from '../service/http.js';
import { credentialRefused, type Credential } from './credential.js';
import { isId, serviceId } from './ids.js';
import type { PrivateReviewBody } from './private-review.js';
import type { ProjectBody } from './projects.js';

export const ASSURANCE_SCHEMA = 'rateloop.human-assurance.v2';
export const BODY_CAP = 65_536;
const BASE = '/api/agent/v1/assurance';

export const RUN_STATUSES = ['draft', 'frozen', 'recruiting', 'collecting', 'aggregating', 'completed', 'cancelled'] as const;
export const RUN_TERMINAL = ['completed', 'cancelled'];

const enc = (s: string) => encodeURIComponent(s).replace(/\./g, '%2E');

export interface ProjectSummary {
  projectId: string;
  name: string;
  dataClassification: string;
  status: string;
  retentionDays: number | null;
  runCount: number | null;
  createdAt: string | null;
}

export interface ProjectList {
  /** The service's list as it came (printed under `service`). */
  doc: ServiceDoc;
  workspaceId: string;
  /** Projects whose id is in its exact form (others stay visible, unchecked, in `doc`). */
  projects: ProjectSummary[];
}

export interface RunSummary {
  runId: string;
  status: string;
  createdAt: string | null;
  completedAt: string | null;
}

function schema(doc: ServiceDoc, route: string): void {
  if (doc.schemaVersion !== ASSURANCE_SCHEMA)
    throw new ServiceError(
      'invalid_response',
      `the service answered ${route} with schemaVersion ${JSON.stringify(doc.schemaVersion)}, not ${ASSURANCE_SCHEMA}`,
    );
}

export function parseProjectList(doc: ServiceDoc): ProjectList {
  schema(doc, 'the project list');
  const listed = arrayField(doc, 'projects');
  if (!listed) throw new ServiceError('invalid_response', 'the project list has no projects array');
  const projects: ProjectSummary[] = [];
  for (const p of listed) {
    const projectId = isDoc(p) ? p.projectId : undefined;
    if (!isDoc(p) || !isId('project', projectId)) continue;
    projects.push({
      projectId,
      name: typeof p.name === 'string' ? p.name : '',
      dataClassification: String(p.dataClassification),
      status: String(p.status),
      retentionDays: integerField(p, 'retentionDays') ?? null,
      runCount: integerField(p, 'runCount') ?? null,
      createdAt: typeof p.createdAt === 'string' ? p.createdAt : null,
    });
  }
  return { doc, workspaceId: serviceId('workspace', doc.workspaceId, 'the workspaceId of the project list'), projects };
}

export function parseProjectCreated(doc: ServiceDoc): { projectId: string; workspaceId: string } {
  schema(doc, 'project creation');
  return {
    projectId: serviceId('project', doc.projectId, 'the new projectId'),
    workspaceId: serviceId('workspace', doc.workspaceId, 'the workspaceId'),
  };
}

export function parseProject(doc: ServiceDoc, projectId: string): { runs: RunSummary[] } {
  schema(doc, 'the project');
  if (doc.projectId !== projectId)
    throw new RefusedError('other_project', `asked for project ${projectId}, the service answered with ${String(doc.projectId)}: refused`);
  const listed = arrayField(doc, 'runs');
  if (!listed || !Array.isArray(doc.suites) || !Array.isArray(doc.policies))
    throw new ServiceError('invalid_response', 'the project has no suites, policies and runs arrays');
  const runs: RunSummary[] = [];
  for (const r of listed) {
    const runId = isDoc(r) ? r.runId : undefined;
    if (!isDoc(r) || !isId('run', runId)) continue;
    runs.push({
      runId,
      status: String(r.status),
      createdAt: typeof r.createdAt === 'string' ? r.createdAt : null,
      completedAt: typeof r.completedAt === 'string' ? r.completedAt : null,
    });
  }
  return { runs };
}

export interface RunStatus {
  runId: string;
  runStatus: string;
  decision: string | null;
  terminal: boolean;
}

export function parseRunStatus(doc: ServiceDoc, runId: string): RunStatus {
  schema(doc, 'the run status');
  if (doc.runId !== runId)
    throw new RefusedError('other_run', `asked for run ${runId}, the service answered about ${String(doc.runId)}: refused`);
  const runStatus = RUN_STATUSES.find((s) => s === doc.runStatus);
  if (runStatus === undefined)
    throw new ServiceError('invalid_response', `the run status ${JSON.stringify(doc.runStatus)} is not one of ${RUN_STATUSES.join(', ')}`);
  // The counts, when the service states a valid total: the three kinds of answer must add up to it (a count that is
  // not a whole number adds up to nothing).
  const r = objectField(doc, 'responses');
  const valid = integerField(r, 'valid');
  const count = (k: string) => integerField(r, k) ?? Number.NaN;
  if (valid !== undefined && valid !== count('baseline') + count('candidate') + count('tie'))
    throw new ServiceError('invalid_response', 'the run status counts do not add up (valid ≠ baseline + candidate + tie)');
  return {
    runId,
    runStatus,
    decision: typeof doc.decision === 'string' ? doc.decision : null,
    terminal: RUN_TERMINAL.includes(runStatus),
  };
}

/** A service refusal as the user should meet it: credential problems exit 6, an unknown project or run exit 2. */
export function assuranceError(error: unknown): unknown {
  if (!(error instanceof ServiceError) || error instanceof CredentialError) return error;
  const d = (error.details ?? {}) as { status?: number };
  const status = d.status ?? 0;
  const message = error.message.replace(/^the service refused [^:]+: /, '');
  if (
    status === 401 ||
    error.code === 'insufficient_scope' ||
    error.code === 'insufficient_role' ||
    error.code.startsWith('credential_') ||
    error.code === 'regulated_data_not_enabled' ||
    error.code === 'private_review_integration_binding_mismatch'
  ) {
    return credentialRefused(serviceCode(error.code) ?? httpStatusCode(status), status, message);
  }
  if (['assurance_project_not_found', 'project_not_found', 'project_access_forbidden'].includes(error.code)) {
    return new UsageError('unknown_project', `the service knows no project this key may use here (${error.code}): ${message}`, {
      hint: 'run `loopsign projects list` for the projects this key holds',
      details: d,
    });
  }
  if (['assurance_run_not_found', 'assurance_resource_not_found'].includes(error.code)) {
    return new UsageError('unknown_run', `the service knows no such run for this key (${error.code})`, {
      hint: 'run `loopsign projects show <projectId>` for its runs',
      details: d,
    });
  }
  return error;
}

export class AssuranceClient {
  readonly http: HttpClient;

  constructor(
    readonly baseUrl: string,
    private readonly credential: Credential,
    out?: Output,
  ) {
    this.http = new HttpClient({
      baseUrl,
      retries: 3,
      onRetry: ({ attempt, waitMs, reason }) =>
        out?.progress('service.retry', `retrying in ${(waitMs / 1000).toFixed(1)} s (attempt ${attempt + 1}): ${reason}`, {
          attempt,
          waitMs,
        }),
    });
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    o: { body?: unknown; idempotent: boolean; headers?: Record<string, string>; query?: Record<string, string | undefined> },
  ): Promise<ServiceDoc> {
    try {
      return await this.http.request<ServiceDoc>({
        method,
        path,
        body: o.body,
        query: o.query,
        idempotent: o.idempotent,
        headers: { authorization: this.credential.authorization, ...o.headers },
      });
    } catch (error) {
      throw error instanceof LoopsignError ? assuranceError(error) : error;
    }
  }

  async listProjects(): Promise<ProjectList> {
    return parseProjectList(await this.call('GET', `${BASE}/projects`, { idempotent: true }));
  }

  /** Not idempotent on the service: never retried here (the caller journals and looks up after a failure). */
  createProject(body: ProjectBody): Promise<ServiceDoc> {
    return this.call('POST', `${BASE}/projects`, { body, idempotent: false });
  }

  getProject(projectId: string): Promise<ServiceDoc> {
    return this.call('GET', `${BASE}/projects/${enc(projectId)}`, { idempotent: true });
  }

  runStatus(runId: string): Promise<ServiceDoc> {
    return this.call('GET', `${BASE}/runs/${enc(runId)}`, { idempotent: true });
  }

  /** Idempotent by its key: a retry is the identical body under the identical Idempotency-Key. */
  createPrivateReview(body: PrivateReviewBody): Promise<ServiceDoc> {
    return this.call('POST', `${BASE}/private-reviews`, {
      body,
      idempotent: true,
      headers: { 'idempotency-key': body.idempotencyKey },
    });
  }

  /** The HTTP twin of rateloop_evaluate_review_requirement (raw decision, no envelope; §6.5.2). */
  reviewDecision(body: Record<string, unknown>): Promise<ServiceDoc> {
    return this.call('POST', `${BASE}/review`, { body, idempotent: true });
  }

  /** The HTTP twin of rateloop_get_assurance_state (§6.5.1). */
  assuranceState(scopeId: string): Promise<ServiceDoc> {
    return this.call('GET', `${BASE}/review`, { idempotent: true, query: { scopeId } });
  }
}
