// loopsign projects list | create | show
import type { Context } from '../context.js';
import { serviceDocument } from '../output.js';
import type { CredentialOptions } from './define.js';
import type { ProjectsCreateOptions } from './projects.def.js';
import { withRerun } from './rerun.js';

const credential = (o: CredentialOptions) => ({ apiKeyFile: o.apiKeyFile, apiKeyEnv: o.apiKeyEnv });

async function projectsListHandler(ctx: Context, options: CredentialOptions): Promise<void> {
  const { openAssurance } = await import('../review/session.js');
  const list = await (await openAssurance(ctx, credential(options))).listProjects();
  ctx.out.result(serviceDocument(list.doc, { workspaceId: list.workspaceId, projects: list.projects }), () =>
    [
      `workspace ${list.workspaceId}: ${list.projects.length} project(s)`,
      ...list.projects.map(
        (p) =>
          `  ${p.projectId}  ${p.dataClassification.padEnd(12)} ${p.status.padEnd(8)} ${String(p.runCount ?? 0).padStart(3)} run(s)  ${JSON.stringify(p.name)}`,
      ),
    ].join('\n'),
  );
}

async function projectsCreateHandler(ctx: Context, options: ProjectsCreateOptions): Promise<void> {
  const { projectBody, createProject } = await import('../review/projects.js');
  const body = projectBody(options);
  const { openAssurance } = await import('../review/session.js');
  const r = await createProject(await ctx.store(), await openAssurance(ctx, credential(options)), body);
  const next = [`loopsign projects show ${r.projectId}`];
  const how = {
    created: 'created',
    journal: 'already created by an earlier run (journaled); nothing sent',
    found_after_ambiguous_failure: 'found: an earlier attempt had created it; nothing sent',
  }[r.source];
  ctx.out.result({ ...r, next }, () => `project ${r.projectId} in workspace ${r.workspaceId}: ${how}\nnext: ${next[0]}`);
}

async function projectsShowHandler(ctx: Context, options: CredentialOptions, args: unknown[]): Promise<void> {
  const { showProject } = await import('../review/projects.js');
  const { openAssurance } = await import('../review/session.js');
  const p = await showProject(await openAssurance(ctx, credential(options)), String(args[0]));
  const next = p.runs.map((r) => `loopsign runs status ${r.runId}${r.status === 'completed' ? '' : ' --wait'}`);
  ctx.out.result(serviceDocument(p.doc, { projectId: p.projectId, runs: p.runs, next }), () =>
    [
      `project ${p.projectId}: ${p.runs.length} run(s)`,
      ...p.runs.map((r) => `  ${r.runId}  ${r.status}${r.completedAt ? ` (completed ${r.completedAt})` : ''}`),
      ...next.map((n) => `next: ${n}`),
    ].join('\n'),
  );
}

// Printed commands carry the flags that chose the credential and the service (./rerun.ts).
export const projectsList = withRerun(projectsListHandler);
export const projectsCreate = withRerun(projectsCreateHandler);
export const projectsShow = withRerun(projectsShowHandler);
