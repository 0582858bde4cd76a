// Run status (review.md §7.3), optionally followed to a terminal state. The assurance routes have no rate limit;
// loopsign still polls only every few seconds.
import { NotReadyError } from '../errors.js';
import type { Output } from '../output.js';
import type { ServiceDoc } from '../service/doc.js';
import { parseRunStatus, type AssuranceClient, type RunStatus } from './assurance.js';
import { userId } from './ids.js';

export const RUN_POLL_MS = 2000;

export async function runStatus(client: AssuranceClient, id: string): Promise<{ doc: ServiceDoc; status: RunStatus }> {
  const runId = userId('run', id, 'run');
  const doc = await client.runStatus(runId);
  return { doc, status: parseRunStatus(doc, runId) };
}

export async function waitForRun(
  client: AssuranceClient,
  id: string,
  timeoutSeconds: number,
  out: Output,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<{ doc: ServiceDoc; status: RunStatus }> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const spinner = await out.spinner('run.wait', `waiting for run ${id}`);
  try {
    for (;;) {
      const r = await runStatus(client, id);
      spinner.update(`run ${r.status.runId}: ${r.status.runStatus}`);
      if (r.status.terminal) {
        spinner.succeed(`run ${r.status.runId}: ${r.status.runStatus}`);
        return r;
      }
      if (Date.now() + RUN_POLL_MS > deadline) {
        throw new NotReadyError('run_wait_timeout', `run ${r.status.runId} is still ${r.status.runStatus} after ${timeoutSeconds} s`, {
          hint: `continue waiting: loopsign runs status ${r.status.runId} --wait`,
          details: { runId: r.status.runId, runStatus: r.status.runStatus },
        });
      }
      await sleep(RUN_POLL_MS);
    }
  } finally {
    spinner.stop();
  }
}
