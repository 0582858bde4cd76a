// What a question submission leaves on chain (chain.md §4.3): the registry's ContentSubmitted and
// SubmissionRewardPoolAttached (or the bundle events), the x402 submitter's X402QuestionSubmitted, and the bonus
// escrow's FeedbackBonusPoolCreated. Shared by the client (which proves its own submission from its receipts before
// it funds a bonus) and the sandbox (which confirms what the wallet sent).
import { decodeEventLog, decodeFunctionData, encodeAbiParameters, keccak256, parseAbiParameters, toBytes, type Hex, type Log } from 'viem';
import { contentRegistryAbi, feedbackBonusEscrowAbi, x402SubmitterAbi } from './abi.js';
import { sameAddress } from '../hex.js';

/** The registry's question-context domain (the live ContentRegistry's QUESTION_CONTEXT_DOMAIN). */
const CONTEXT_DOMAIN = keccak256(toBytes('rateloop-question-context-v5'));

export interface SubmittedQuestion {
  contextUrl: string;
  imageUrls: readonly string[];
  videoUrl: string;
  title: string;
  tags: string;
  categoryId: bigint;
  details: { detailsUrl: string; detailsHash: Hex };
  spec: { questionMetadataHash: Hex; resultSpecHash: Hex };
  /** The per-question salt (chain.md §6.8): not part of the content hash, but it binds the submission to one ask. */
  salt?: Hex;
}

/** ContentSubmitted.contentHash: binds every field of the submitted question (the live registry's formula). */
export function contentHash(q: SubmittedQuestion): Hex {
  const details = keccak256(encodeAbiParameters(parseAbiParameters('string, bytes32'), [q.details.detailsUrl, q.details.detailsHash]));
  return keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, string, string[], string, bytes32, string, string, uint256, bytes32, bytes32'), [
      CONTEXT_DOMAIN,
      q.contextUrl,
      [...q.imageUrls],
      q.videoUrl,
      details,
      q.title,
      q.tags,
      q.categoryId,
      q.spec.questionMetadataHash,
      q.spec.resultSpecHash,
    ]),
  );
}

type AnyAbi = readonly unknown[];

/** Events of one ABI emitted by `address` in the given logs, decoded; logs that do not decode are skipped. */
export function eventsOf<A extends AnyAbi>(logs: readonly Log[], address: Hex, abi: A, name: string): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  for (const l of logs) {
    if (!sameAddress(l.address, address)) continue;
    try {
      const d = decodeEventLog({ abi: abi as never, data: l.data, topics: l.topics }) as unknown as {
        eventName: string;
        args: Record<string, any>;
      };
      if (d.eventName === name) out.push(d.args);
    } catch {
      // another event of the same contract
    }
  }
  return out;
}

export const registryEvents = (logs: readonly Log[], registry: Hex) => ({
  contents: eventsOf(logs, registry, contentRegistryAbi, 'ContentSubmitted'),
  rewards: eventsOf(logs, registry, contentRegistryAbi, 'SubmissionRewardPoolAttached'),
  bundles: eventsOf(logs, registry, contentRegistryAbi, 'QuestionBundleSubmitted'),
});

export const x402Submissions = (logs: readonly Log[], submitter: Hex) =>
  eventsOf(logs, submitter, x402SubmitterAbi, 'X402QuestionSubmitted');

export const bonusPoolsCreated = (logs: readonly Log[], escrow: Hex) =>
  eventsOf(logs, escrow, feedbackBonusEscrowAbi, 'FeedbackBonusPoolCreated');

/** The questions a submit call (registry single or bundle, or x402) carries, as the registry will hash them. */
export function questionsOfSubmit(data: Hex): SubmittedQuestion[] {
  for (const abi of [contentRegistryAbi, x402SubmitterAbi] as const) {
    let d: { functionName: string; args: readonly any[] };
    try {
      d = decodeFunctionData({ abi: abi as never, data }) as never;
    } catch {
      continue;
    }
    if (d.functionName === 'submitQuestionBundleWithRewardAndRoundConfig') {
      return (d.args[0] as Record<string, any>[]).map((q) => ({ ...q }) as unknown as SubmittedQuestion);
    }
    if (d.functionName.startsWith('submitQuestion')) {
      const [contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, salt, , , spec] = d.args;
      return [{ contextUrl, imageUrls, videoUrl, title, tags, categoryId, details, spec, salt }];
    }
  }
  return [];
}
