// Following a review to its result (review.md §5.5.6–5.5.7, §5.6.3–5.6.4, §10.8–10.10): long polls with the inner
// wait cursor, at least retryAfterMs apart, within the shared request budget; at a terminal state the result is read
// (which also finalizes it on the service) and judged by §5.6.4. A wait that times out is only that — never a
// reason to evaluate again: the next step is the same wait on the same opportunity.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { NotReadyError, RefusedError, UsageError } from '../errors.js';
import type { Output } from '../output.js';
import { objectField } from '../service/doc.js';
import { parseEnvelope, reviewVerdict, verdictSentence, WAIT_CURSOR, type Envelope, type Verdict } from './envelope.js';
import type { GateTrust } from './gate.js';
import { userId } from './ids.js';
import type { ReviewRecords } from './records.js';
import type { WorkspaceMcp } from './workspace-mcp.js';

export const LONG_POLL_MS = 60_000;

export interface Followed {
  envelope: Envelope;
  verdict: Verdict;
  /** The inner wait cursor to resume from (null when the service gave none). */
  cursor: string | null;
  /** The HumanReviewResultEnvelope of a private lane (or the public result), when read: the service's, passed through. */
  result: unknown;
}

export interface FollowOptions {
  trust?: GateTrust;
  /** The output to release, whose hash must be the evidence's outputCommitment (default: the journaled suggestion). */
  outputFile?: string;
  sleep?: (ms: number) => Promise<void>;
}

const sleepReal = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function localOutput(records: ReviewRecords, opportunityId: string, outputFile: string | undefined): Promise<string | undefined> {
  if (outputFile !== undefined) {
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(outputFile);
    } catch (error) {
      throw new UsageError('file_not_found', `--output ${outputFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  }
  return records.readOpportunity(opportunityId)?.outputCommitment;
}

/** `rateloop_get_review_result`: the terminal envelope, judged. Not ready → exit 7 (from the tool error). */
export async function reviewResult(mcp: WorkspaceMcp, records: ReviewRecords, id: string, o: FollowOptions = {}): Promise<Followed> {
  const opportunityId = userId('opportunity', id, 'opportunity');
  const doc = await mcp.tool('rateloop_get_review_result', { opportunityId });
  const envelope = parseEnvelope(doc, 'rateloop_get_review_result', opportunityId);
  const result = doc.result ?? null;
  // The result inside must be this opportunity's too ("a review result for another opportunity" is refused).
  const about = objectField(doc, 'result')?.opportunityId;
  if (about !== undefined && about !== opportunityId) {
    throw new RefusedError(
      'other_opportunity',
      `asked for the result of ${opportunityId}, the service answered with the result of ${String(about)}: refused`,
      { details: { expected: opportunityId, actual: about } },
    );
  }
  const verdict = reviewVerdict(envelope, o.trust, await localOutput(records, opportunityId, o.outputFile));
  const record = records.readOpportunity(opportunityId);
  return { envelope, verdict, cursor: record?.cursor ?? null, result };
}

export async function waitReview(
  mcp: WorkspaceMcp,
  records: ReviewRecords,
  id: string,
  timeoutSeconds: number,
  out: Output,
  o: FollowOptions & { cursor?: string } = {},
): Promise<Followed> {
  const opportunityId = userId('opportunity', id, 'opportunity');
  if (o.cursor !== undefined && !WAIT_CURSOR.test(o.cursor))
    throw new UsageError('invalid_cursor', '--cursor must be a wait cursor as printed by an earlier wait (digits, or revision:count)');
  const sleep = o.sleep ?? sleepReal;
  const record = records.readOpportunity(opportunityId);
  let cursor: string | null = o.cursor ?? record?.cursor ?? null;
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last: Envelope | undefined;
  const spinner = await out.spinner('review.wait', `waiting for review ${opportunityId}`);
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        const state = last?.state ?? 'unknown';
        throw new NotReadyError(
          'review_wait_timeout',
          `review ${opportunityId} is still ${state} after ${timeoutSeconds} s; a timeout is not approval`,
          {
            hint: `wait again on the same opportunity (never evaluate a new one): loopsign review wait ${opportunityId}${cursor ? ` --cursor ${cursor}` : ''}`,
            details: { opportunityId, state, cursor, approved: false },
          },
        );
      }
      const timeoutMs = Math.max(1, Math.min(LONG_POLL_MS, left));
      const doc = await mcp.tool(
        'rateloop_wait_for_review',
        { opportunityId, ...(cursor ? { cursor } : {}), timeoutMs },
        timeoutMs + 15_000,
      );
      last = parseEnvelope(doc, 'rateloop_wait_for_review', opportunityId);
      // The inner cursor; with none the next wait goes without one (never the top-level revision, §5.6.3).
      cursor = last.wait?.cursor ?? null;
      // Only what the wait told: the output's hash stays the one computed here from local text, never the service's.
      if (cursor !== null || last.wait?.deliveryId)
        await records.saveOpportunity({ opportunityId, cursor: cursor ?? undefined, deliveryId: last.wait?.deliveryId ?? undefined });
      spinner.update(
        `review ${opportunityId}: ${last.state}${last.wait?.responseCount != null ? ` (${last.wait.responseCount} responses)` : ''}`,
      );
      if (last.terminal) break;
      await sleep(Math.max(1000, last.continuation?.retryAfterMs ?? 1000));
    }
  } finally {
    spinner.stop();
  }
  const followed = await reviewResult(mcp, records, opportunityId, o);
  return { ...followed, cursor };
}

/** Exit 0 only for approval; everything else is the error a user should see (exit 7 with the state named). */
export function settle(f: Followed): void {
  const v = f.verdict;
  if (v.approved) return;
  const details = {
    opportunityId: v.opportunityId,
    state: v.state,
    approved: false,
    reason: v.reason,
    evidence: v.evidence,
    cursor: f.cursor,
    releaseDisposition: v.releaseDisposition,
    resultOutcome: v.resultOutcome,
  };
  const unverifiable = ['unsigned', 'no_gate_key', 'untrusted_gate_key', 'no_local_output'].includes(v.reason);
  const code = v.reason === 'not_terminal' ? 'review_not_finished' : unverifiable ? 'review_unverifiable' : 'review_not_approved';
  const hints: Record<string, string> = {
    not_terminal: `wait for it: loopsign review wait ${v.opportunityId}`,
    unsigned: `the service could not sign its evidence yet: read the result again later with loopsign review result ${v.opportunityId}`,
    no_gate_key: 'pin the review-gate key: --trusted-keys FILE (from `loopsign evidence keys --out FILE`) or --gate-key PIN',
    untrusted_gate_key: 'refresh the trusted keys (`loopsign evidence keys --out FILE`) if the service rotated its gate key',
    no_local_output: 'give the output you mean to release: --output FILE',
  };
  throw new NotReadyError(code, verdictSentence(v), { hint: hints[v.reason], details });
}
