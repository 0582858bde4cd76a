// What loopsign keeps about each review opportunity it evaluated (journal files, 0600): the exact evaluate
// arguments and the exact source and suggestion text, written *before* evaluate is called (review.md §10.5), so a
// retry repeats byte-identical inputs, `review request` sends the very text that was committed to, and the result's
// evidence is compared with the local hash of the output to release. No credential is ever written here.
import { createHash } from 'node:crypto';
import type { Store } from '../store/db.js';
import { Operation, operationId, readOperation } from '../store/operation.js';

/** The question an agent writes for a profile whose question authority is agent_per_request (review.md §5.5.4). */
export interface ReviewQuestion {
  kind: 'binary';
  prompt: string;
  positiveLabel: string;
  negativeLabel: string;
}

export interface OpportunityRecord {
  opportunityId: string;
  /** sha256 of the exact output text (the suggestion, hashed here), for comparing with the signed evidence. */
  outputCommitment?: string;
  externalOpportunityId?: string;
  sourcePayload?: string;
  suggestionPayload?: string;
  sourceContentType?: string;
  suggestionContentType?: string;
  /** The agent-written question, for profiles whose question authority is agent_per_request. */
  question?: ReviewQuestion;
  /** The private delivery, once known (its run is where the evidence packet comes from). */
  deliveryId?: string;
  /** The last inner wait cursor. */
  cursor?: string;
}

export const sha256Text = (s: string): string => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;

/** The review journals of one service origin (they are keyed by it). */
export class ReviewRecords {
  constructor(
    private readonly store: Store,
    readonly baseUrl: string,
  ) {}

  private opportunityId(opportunityId: string): string {
    return operationId('review-opportunity', [this.baseUrl, opportunityId]);
  }

  readOpportunity(opportunityId: string): OpportunityRecord | undefined {
    return readOperation(this.store, 'review-opportunity', this.opportunityId(opportunityId))?.data.record as OpportunityRecord | undefined;
  }

  /** Merges what is known now into the record (fields already recorded are kept unless given again). */
  async saveOpportunity(record: Partial<OpportunityRecord> & { opportunityId: string }): Promise<void> {
    const journal = await Operation.open(this.store, 'review-opportunity', this.opportunityId(record.opportunityId), {
      chainId: 0,
      wallet: '',
      data: { baseUrl: this.baseUrl },
    });
    try {
      const merged: Record<string, unknown> = { ...(journal.data.record ?? {}) };
      for (const [k, v] of Object.entries(record)) if (v !== undefined) merged[k] = v;
      await journal.save({ record: merged });
    } finally {
      await journal.close();
    }
  }

  /** The evaluation journal of one external opportunity id: opened (and claimed) for the length of an evaluate. */
  openEvaluation(externalOpportunityId: string): Promise<Operation<'review-evaluation'>> {
    // Hex: operation ids are case-folded, external ids are not.
    return Operation.open(
      this.store,
      'review-evaluation',
      operationId('review-evaluation', [this.baseUrl, Buffer.from(externalOpportunityId).toString('hex')]),
      {
        chainId: 0,
        wallet: '',
        data: { baseUrl: this.baseUrl, externalOpportunityId },
      },
    );
  }
}
