// A review's run and its evidence packet (review.md §7). When a private review is terminal the service projects it
// into an assurance run of its project whose id derives from the delivery: `hau_` + the first 40 hex of
// SHA-256(deliveryId + "\0") (the service's directPrivateReviewEvidence.ts; review.md does not say so). The packet
// is fetched with the browser session cookie and verified offline by the evidence verifier; a packet of another run
// is refused (exit 5), one that does not verify is exit 8.
import { createHash } from 'node:crypto';
import { NotReadyError, RefusedError, UsageError } from '../errors.js';
import type { PacketTrust } from '../evidence/files.js';
import type { SessionCookieSource } from '../evidence/session-cookie.js';
import type { AssuranceClient } from './assurance.js';
import { isId } from './ids.js';
import { runStatus } from './runs.js';
import type { Env } from '../env.js';

export function runIdOfDelivery(deliveryId: string): string {
  return `hau_${createHash('sha256').update(`${deliveryId}\0`).digest('hex').slice(0, 40)}`;
}

export interface VerifiedRun {
  runId: string;
  workspaceId: string;
  packetDigest: string | null;
  keyId: string | null;
}

export async function verifyRunPacket(
  client: AssuranceClient,
  workspaceId: string,
  runId: string,
  trust: PacketTrust,
  cookie: SessionCookieSource,
  /** The run's environment, where the cookie's named variable is read. */
  env: Env,
): Promise<VerifiedRun> {
  if (!isId('workspace', workspaceId) || !isId('run', runId))
    throw new UsageError('invalid_id', `cannot build the evidence route for workspace ${workspaceId} and run ${runId}`);
  const ev = await import('../evidence/files.js');
  ev.requireTrust(trust);
  const { sessionCookieHeader } = await import('../evidence/session-cookie.js');
  const header = await sessionCookieHeader(cookie, env);
  const { status } = await runStatus(client, runId);
  if (status.runStatus !== 'completed') {
    throw new NotReadyError('run_not_completed', `run ${runId} is ${status.runStatus}; only a completed run has an evidence packet`, {
      hint: `loopsign runs status ${runId} --wait`,
      details: { runId, runStatus: status.runStatus },
    });
  }
  const dl = await import('../evidence/download.js');
  const route = dl.evidenceRoute({ what: 'run', workspace: workspaceId, runId });
  const fetched = await dl.fetchEvidence(dl.evidenceHttp(client.baseUrl), route, header);
  const { outcome, mismatch } = await dl.verifyFetched(fetched, trust);
  if (mismatch)
    throw new RefusedError(
      'run_id_mismatch',
      `asked for the evidence of run ${runId}, the service sent the packet of ${String(mismatch.actual)}: refused`,
      { details: { expected: runId, actual: mismatch.actual } },
    );
  if (!outcome.result.valid) throw ev.invalidError(outcome);
  const r = outcome.result as { packetDigest?: string };
  const keyId = (fetched.doc.signing as { keyId?: unknown } | undefined)?.keyId;
  return { runId, workspaceId, packetDigest: r.packetDigest ?? null, keyId: typeof keyId === 'string' ? keyId : null };
}
