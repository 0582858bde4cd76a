// Projects (review.md §6.1–6.3). Creating one is not idempotent on the service — every accepted POST makes a new
// project — so the request is journaled before it is sent: after an ambiguous failure (no answer, a 5xx) the next
// run lists the projects and adopts the one that appeared since, instead of sending again; after a success a rerun
// answers with the journaled project. A rerun never makes two.
import { createHash } from 'node:crypto';
import { LoopsignError, ServiceError, UsageError } from '../errors.js';
import type { Store } from '../store/db.js';
import { Operation, operationId } from '../store/operation.js';
import { canonicalJson } from '../protocol/canonical.js';
import type { ServiceDoc } from '../service/doc.js';
import { parseProject, parseProjectCreated, type AssuranceClient, type ProjectSummary, type RunSummary } from './assurance.js';
import { userId } from './ids.js';

export const CLASSIFICATIONS = ['public', 'internal', 'confidential', 'restricted', 'regulated'] as const;

export interface ProjectRequest {
  name?: string;
  description?: string;
  dataClassification?: string;
  retentionDays?: string;
}

/** A project as §6.2 creates it. */
export type ProjectBody = { name: string; dataClassification: string; retentionDays: number; description?: string };

/** The body §6.2 accepts, checked here (exit 2) so a malformed request is never sent. Private projects only. */
export function projectBody(o: ProjectRequest): ProjectBody {
  const name = (o.name ?? '').trim();
  if (!name || name.length > 160) throw new UsageError('invalid_name', '--name must be 1 … 160 characters');
  if (!(CLASSIFICATIONS as readonly string[]).includes(String(o.dataClassification))) {
    throw new UsageError('invalid_data_classification', `--data-classification must be one of ${CLASSIFICATIONS.join(', ')}`);
  }
  const days = Number(o.retentionDays);
  if (!/^[0-9]+$/.test(String(o.retentionDays)) || !Number.isSafeInteger(days) || days < 1 || days > 3650)
    throw new UsageError('invalid_retention_days', '--retention-days must be a whole number of days, 1 … 3650');
  const body: ProjectBody = { name, dataClassification: String(o.dataClassification), retentionDays: days };
  if (o.description !== undefined) {
    const d = o.description.trim();
    if (!d || d.length > 2000) throw new UsageError('invalid_description', '--description must be 1 … 2000 characters');
    body.description = d;
  }
  return body;
}

export interface CreatedProject {
  projectId: string;
  workspaceId: string;
  /** True when this run sent the request that made it. */
  created: boolean;
  /** How the project was known: sent now, journaled earlier, or found after an ambiguous failure. */
  source: 'created' | 'journal' | 'found_after_ambiguous_failure';
}

const matches = (p: ProjectSummary, body: ProjectBody) =>
  p.name === body.name && p.dataClassification === body.dataClassification && p.retentionDays === body.retentionDays;

/** A 4xx is a definite refusal (nothing was created); a lost answer or a 5xx may have created the project. */
function ambiguous(error: unknown): boolean {
  if (!(error instanceof LoopsignError)) return true;
  if (!(error instanceof ServiceError)) return false;
  const status = (error.details as { status?: number } | undefined)?.status;
  return status === undefined || status >= 500;
}

export async function createProject(store: Store, client: AssuranceClient, body: ProjectBody): Promise<CreatedProject> {
  const digest = createHash('sha256').update(canonicalJson(body)).digest('hex');
  const journal = await Operation.open(store, 'project-create', operationId('project-create', [client.baseUrl, digest]), {
    chainId: 0,
    wallet: '',
    data: { request: body, baseUrl: client.baseUrl },
  });
  try {
    const j = journal.data;
    if (journal.step === 'project_created' && typeof j.projectId === 'string')
      return { projectId: j.projectId, workspaceId: j.workspaceId!, created: false, source: 'journal' };
    let list: Awaited<ReturnType<AssuranceClient['listProjects']>> | undefined;
    if (journal.step === 'sending') {
      // An earlier attempt may have created it: look before sending again.
      list = await client.listProjects();
      const known = new Set<string>(j.knownBefore ?? []);
      const found = list.projects.filter((p) => !known.has(p.projectId) && matches(p, body));
      if (found.length > 0) {
        const p = found[0]!;
        await journal.setStep('project_created', {
          projectId: p.projectId,
          workspaceId: list.workspaceId,
          foundAfterAmbiguousFailure: true,
        });
        return { projectId: p.projectId, workspaceId: list.workspaceId, created: false, source: 'found_after_ambiguous_failure' };
      }
    }
    const before = list ?? (await client.listProjects());
    await journal.setStep('sending', { knownBefore: before.projects.map((p) => p.projectId), sentAt: new Date().toISOString() });
    let doc: ServiceDoc;
    try {
      doc = await client.createProject(body);
    } catch (error) {
      if (!ambiguous(error)) {
        await journal.setStep('refused', { error: (error as LoopsignError).code });
        throw error;
      }
      throw new ServiceError(
        'project_create_unconfirmed',
        `the project request got no clear answer (${(error as Error).message}); it may have been created`,
        {
          hint: 'run the same command again: loopsign lists the projects first and adopts the one that was made, so a rerun never creates two',
          cause: error,
          details: { retryable: true },
        },
      );
    }
    const created = parseProjectCreated(doc);
    await journal.setStep('project_created', { projectId: created.projectId, workspaceId: created.workspaceId });
    return { ...created, created: true, source: 'created' };
  } finally {
    await journal.close();
  }
}

export async function showProject(
  client: AssuranceClient,
  id: string,
): Promise<{ doc: ServiceDoc; projectId: string; runs: RunSummary[] }> {
  const projectId = userId('project', id, 'project');
  const doc = await client.getProject(projectId);
  return { doc, projectId, ...parseProject(doc, projectId) };
}
