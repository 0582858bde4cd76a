// loopsign runs status [--wait]
import type { Context } from '../context.js';
import { serviceDocument } from '../output.js';
import { timeoutOf } from './timeout.js';
import { sleepUnlessAborted } from '../sleep.js';
import type { RunsStatusOptions } from './runs.def.js';
import { withRerun } from './rerun.js';

async function runsStatusHandler(ctx: Context, options: RunsStatusOptions, args: unknown[]): Promise<void> {
  const runs = await import('../review/runs.js');
  const { userId } = await import('../review/ids.js');
  const runId = userId('run', String(args[0]), 'run');
  const timeout = timeoutOf(options.timeout, 600);
  const { openAssurance } = await import('../review/session.js');
  const client = await openAssurance(ctx, { apiKeyFile: options.apiKeyFile, apiKeyEnv: options.apiKeyEnv });
  const r =
    options.wait === true
      ? await runs.waitForRun(client, runId, timeout, ctx.out, (ms) => sleepUnlessAborted(ms, ctx.signal))
      : await runs.runStatus(client, runId);
  const next: string[] = [];
  if (r.status.runStatus === 'completed') {
    // The evidence route is per workspace: the workspace of this key, in its exact form (parseProjectList checks it).
    const { workspaceId } = await client.listProjects();
    next.push(
      `loopsign evidence fetch run ${r.status.runId} --workspace ${workspaceId} --session-cookie-env RATELOOP_SESSION --trusted-keys trusted-keys.json`,
    );
  } else if (!r.status.terminal) {
    next.push(`loopsign runs status ${r.status.runId} --wait`);
  }
  ctx.out.result(
    serviceDocument(r.doc, {
      runId: r.status.runId,
      runStatus: r.status.runStatus,
      decision: r.status.decision,
      terminal: r.status.terminal,
      next,
    }),
    () =>
      [
        `run ${r.status.runId}: ${r.status.runStatus}${r.status.decision ? ` (decision ${r.status.decision}; not approval of any single output)` : ''}`,
        ...next.map((n) => `next: ${n}`),
        ...(r.status.runStatus === 'completed'
          ? [
              '      (the browser session cookie in RATELOOP_SESSION; trusted-keys.json from `loopsign evidence keys --out trusted-keys.json`)',
            ]
          : []),
      ].join('\n'),
  );
}

// Printed commands carry the flags that chose the credential and the service (./rerun.ts).
export const runsStatus = withRerun(runsStatusHandler);
