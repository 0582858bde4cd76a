// What loopsign keeps about each review opportunity it evaluated (journal files, 0600): the exact evaluate
// arguments and the exact source and suggestion text, written *before* evaluate is called (review.md §10.5), so a
// retry repeats byte-identical inputs, `review request` sends the very text that was committed to, and the result's
// evidence is compared with the local hash of the output to release. No credential is ever written here.
import { createHash } from 'node:crypto';
import { Journal, journalId } from '../journal/journal.js';
import type { Json } from '../service/client.js';

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
  question?: Json;
  /** The private delivery, once known (its run is where the evidence packet comes from). */
  deliveryId?: string;
  /** The last inner wait cursor. */
  cursor?: string;
}

export const sha256Text = (s: string): string => `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;

const opportunityJournal = (baseUrl: string, opportunityId: string) => journalId('review-opportunity', [baseUrl, opportunityId]);

export async function readOpportunity(baseUrl: string, opportunityId: string): Promise<OpportunityRecord | undefined> {
  const data = await Journal.read(opportunityJournal(baseUrl, opportunityId));
  return data ? (data.record as OpportunityRecord) : undefined;
}

/** Merges what is known now into the record (fields already recorded are kept unless given again). */
export async function saveOpportunity(baseUrl: string, record: Partial<OpportunityRecord> & { opportunityId: string }): Promise<void> {
  const journal = await Journal.open(opportunityJournal(baseUrl, record.opportunityId), { kind: 'review-opportunity', chainId: 0, wallet: '', baseUrl });
  try {
    const merged = { ...((journal.data.record as Json | undefined) ?? {}) };
    for (const [k, v] of Object.entries(record)) if (v !== undefined) merged[k] = v;
    await journal.save({ record: merged });
  } finally {
    await journal.close();
  }
}

/** The evaluation journal of one external opportunity id: opened (and locked) for the length of an evaluate. */
export function openEvaluation(baseUrl: string, externalOpportunityId: string): Promise<Journal> {
  // Hex: journal ids are case-folded, external ids are not.
  return Journal.open(journalId('review-evaluation', [baseUrl, Buffer.from(externalOpportunityId).toString('hex')]), { kind: 'review-evaluation', chainId: 0, wallet: '', baseUrl, externalOpportunityId });
}
