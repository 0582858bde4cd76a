// The chain's word on a submission (issue 11 §2). "Submitted" is believed only from the receipt of a transaction
// this wallet sent (journaled here, or named by the service and then checked), read from the trusted contracts'
// own events: the registry's ContentSubmitted + SubmissionRewardPoolAttached (or the bundle events), or the x402
// submitter's X402QuestionSubmitted for an authorization this wallet signed. The content ids loopsign reports and
// funds a bonus for come from here, never from the service's answer.
import { formatUnits, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { ChainError, RefusedError } from '../errors.js';
import { sameAddress, sameHex } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import type { Operation } from '../store/operation.js';
import { isLive } from '../store/records.js';

type Journal = Operation<'ask'>;
import { votingEngineAbi } from '../protocol/abi.js';
import { ASSET_ENUM, type NormalizedAsk } from '../protocol/ask-normalize.js';
import { contentHash, questionsOfSubmit, registryEvents, x402Submissions } from '../protocol/submission.js';
import { callsOfRawTransaction, callsOfTransaction } from '../wallet/spend-effects.js';
import type { BonusTarget } from '../wallet/plan-guard.js';

export interface SubmissionProof {
  contentIds: string[];
  /** The transaction whose receipt proves it. */
  transactionHash: Hex;
  blockNumber: bigint;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
// The service's confirm takes 1 to 32 transaction hashes (service-api.md), so it never holds more for one ask. Each
// named hash costs a receipt read: a service naming thousands would hold the run for as many.
const MAX_NAMED = 32;

function unproven(why: string): never {
  throw new RefusedError(
    'unproven_submission',
    `refused: the service reports this ask as submitted, but ${why}; nothing was paid for a bonus and nothing was signed`,
    {
      hint: "loopsign believes a submission only from a receipt of this wallet's own transaction; check the wallet's transactions, and `loopsign status`",
      details: { rule: 'unproven_submission' },
    },
  );
}

/** Transaction hashes worth reading: this operation's journaled ask transactions, then well-formed ones the service named. */
export function candidateTransactions(journal: Journal, serviceHashes: unknown): Hex[] {
  const own = journal
    .txsFor('ask')
    .filter(isLive)
    .map((t) => t.hash);
  const named = Array.isArray(serviceHashes)
    ? serviceHashes.filter((h): h is Hex => typeof h === 'string' && HASH.test(h)).slice(0, MAX_NAMED)
    : [];
  return [...new Set([...own, ...named].map((h) => h.toLowerCase() as Hex))];
}

/**
 * Proves the ask's submission from one of the candidate transactions, or refuses (exit 5). For a transaction this
 * operation journaled, the submitted questions' content hashes must also be those of the submit call it signed. A
 * registry submission this operation did not journal must carry this ask's own salts (`salts`, chain.md §6.8: they
 * hash the operationKey), or this wallet's earlier question with the same title and bounty would pass for this one.
 */
export async function proveSubmission(
  client: PublicClient,
  chain: ChainConfig,
  wallet: Hex,
  ask: NormalizedAsk,
  journal: Journal,
  candidates: Hex[],
  salts: Hex[] | undefined,
): Promise<SubmissionProof> {
  if (candidates.length === 0) unproven('no transaction of this wallet submitted it (none in the journal, none named by the service)');
  const reasons: string[] = [];
  // A receipt read that failed (a timeout, a 503) is no word on the transaction: the node's failure is reported
  // (exit 4, rpc_failed) when no other candidate proves the ask, never "no receipt proves it" (a refusal, exit 5).
  // Nor is "no such receipt" for a transaction this operation journaled as mined (its receipt was read, in a block):
  // a node that says so now is behind the one that gave it (a load balancer's lagging backend), not the chain's word.
  let failedRead: unknown;
  const minedIn = new Map(
    journal
      .txsFor('ask')
      .filter((t) => t.status === 'mined')
      .map((t) => [t.hash.toLowerCase(), t.blockNumber] as const),
  );
  for (const hash of candidates) {
    const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if ((error as Error)?.name !== 'TransactionReceiptNotFoundError') failedRead ??= error;
      else if (minedIn.has(hash.toLowerCase()))
        failedRead ??= new ChainError(
          'rpc_failed',
          `the RPC has no receipt for transaction ${hash}, which this ask journaled as mined (block ${minedIn.get(hash.toLowerCase()) ?? 'unknown'}): the node is behind the chain`,
          {
            hint: 'check the RPC (--rpc-url) and run the same command again: nothing is signed again, and the journal resumes',
            cause: error,
          },
        );
      return undefined;
    });
    if (!receipt) {
      reasons.push(`${hash}: no receipt`);
      continue;
    }
    let why = mismatch(receipt, chain, wallet, ask, journal);
    if (
      typeof why !== 'string' &&
      !journal.txs().some((t) => sameHex(t.hash, hash)) &&
      !paidByAuthorization(receipt, chain, wallet, journal)
    ) {
      why = (await notThisAsk(client, receipt, chain, wallet, salts)) ?? why;
    }
    if (typeof why === 'string') reasons.push(`${hash}: ${why}`);
    else return { contentIds: why, transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber };
  }
  if (failedRead !== undefined) throw failedRead;
  return unproven(`no receipt proves it (${reasons.join('; ')})`);
}

const viaX402 = (receipt: TransactionReceipt, chain: ChainConfig) =>
  chain.contracts.x402QuestionSubmitter !== undefined && sameAddress(receipt.to, chain.contracts.x402QuestionSubmitter);

/** The trusted submitter's X402QuestionSubmitted events in this receipt for an authorization this operation signed. */
function authorizedSubmissions(receipt: TransactionReceipt, chain: ChainConfig, wallet: Hex, journal: Journal): Record<string, any>[] {
  const x402 = chain.contracts.x402QuestionSubmitter as Hex | undefined;
  if (x402 === undefined) return [];
  const nonces = journal.authorizations().map((a) => a.message.nonce);
  return x402Submissions(receipt.logs, x402).filter(
    (e) => sameAddress(e.submitter, wallet) && nonces.some((n) => sameHex(n, e.paymentNonce)),
  );
}

const paidByAuthorization = (receipt: TransactionReceipt, chain: ChainConfig, wallet: Hex, journal: Journal) =>
  authorizedSubmissions(receipt, chain, wallet, journal).length > 0;

/** Why a registry submission this operation did not sign is not this ask's (its calldata, read from the chain), if it is not. */
async function notThisAsk(
  client: PublicClient,
  receipt: TransactionReceipt,
  chain: ChainConfig,
  wallet: Hex,
  salts: Hex[] | undefined,
): Promise<string | undefined> {
  if (!salts) return "it is not in this operation's journal, and a seed-shaped ask's salts cannot be recomputed to bind it to this ask";
  const tx = await client.getTransaction({ hash: receipt.transactionHash });
  const registry = chain.contracts.contentRegistry;
  let calls;
  try {
    calls = callsOfTransaction(tx.to as Hex, tx.input, wallet);
  } catch {
    return 'its calls cannot be read';
  }
  const questions = calls.filter((c) => sameAddress(c.to, registry)).flatMap((c) => questionsOfSubmit(c.data));
  const contents = registryEvents(receipt.logs, chain.contracts.contentRegistry as Hex).contents.filter((c) =>
    sameAddress(c.submitter, wallet),
  );
  if (questions.length !== contents.length || questions.some((q, i) => !sameHex(contentHash(q), contents[i]!.contentHash)))
    return 'its content hashes are not those of its own submit call';
  if (questions.length !== salts.length || questions.some((q, i) => !sameHex(q.salt, salts[i])))
    return "it is another ask's submission (its salts are not the ones this ask hashes to)";
  return undefined;
}

/** The proven content ids, or why this receipt does not prove the ask. */
function mismatch(receipt: TransactionReceipt, chain: ChainConfig, wallet: Hex, ask: NormalizedAsk, journal: Journal): string[] | string {
  if (receipt.status !== 'success') return 'it reverted';
  // An x402 submission is this wallet's by an authorization it signed for this ask, whoever sent the transaction.
  const authorized = authorizedSubmissions(receipt, chain, wallet, journal);
  if (authorized.length === 0 && !sameAddress(receipt.from, wallet)) return `it was sent by ${receipt.from}, not this wallet`;
  const registry = chain.contracts.contentRegistry as Hex;
  const ev = registryEvents(receipt.logs, registry);
  const contents = ev.contents.filter((c) => sameAddress(c.submitter, wallet));
  if (contents.length !== ask.questions.length)
    return `it submitted ${contents.length} question(s) from this wallet, the ask has ${ask.questions.length}`;
  for (const [i, q] of ask.questions.entries()) {
    const c = contents[i]!;
    if (c.title !== q.title) return `question ${i} is titled ${JSON.stringify(c.title)}, the file says ${JSON.stringify(q.title)}`;
    if (BigInt(c.categoryId) !== q.categoryId) return `question ${i} is in category ${String(c.categoryId)}, the file says ${q.categoryId}`;
  }
  const ids = contents.map((c) => String(c.contentId));
  const b = ask.bounty;
  const reward = `${formatUnits(b.amount, 6)} ${b.asset}`;
  if (authorized.length > 0 || viaX402(receipt, chain)) {
    // The payer is proven by the submitter's own event, bound to an authorization this wallet signed.
    if (!authorized.some((e) => String(e.contentId) === String(ids[0])))
      return 'no X402QuestionSubmitted event for an authorization this wallet signed';
  } else if (ask.isBundle) {
    const bundle = ev.bundles.find((x) => sameAddress(x.submitter, wallet));
    if (!bundle || Number(bundle.rewardAsset) !== ASSET_ENUM[b.asset] || BigInt(bundle.amount) !== b.amount)
      return `no bundle reward of ${reward} from this wallet`;
  } else {
    const r = ev.rewards.find((x) => String(x.contentId) === String(ids[0]) && sameAddress(x.submitter, wallet));
    if (
      !r ||
      Number(r.rewardAsset) !== ASSET_ENUM[b.asset] ||
      BigInt(r.amount) !== b.amount ||
      BigInt(r.requiredVoters) !== BigInt(b.requiredVoters)
    ) {
      return `its reward pool is not the file's ${reward} for ${b.requiredVoters} voters`;
    }
  }
  // A transaction this operation signed: its submit call is known byte for byte, and so is every content hash.
  const own = journal.txs().find((t) => sameHex(t.hash, receipt.transactionHash));
  if (own) {
    const submit = callsOfRawTransaction(own.raw, wallet).flatMap((c) => questionsOfSubmit(c.data));
    if (submit.length !== contents.length || submit.some((q, i) => !sameHex(contentHash(q), contents[i]!.contentHash)))
      return 'its content hashes are not those of the submit call this wallet signed';
  }
  return ids;
}

/** The question's open round as the voting engine records it: what a bonus pool must target. */
export async function bonusChainFacts(client: PublicClient, chain: ChainConfig, contentId: string): Promise<BonusTarget> {
  const engine = { address: chain.contracts.roundVotingEngine as Hex, abi: votingEngineAbi } as const;
  const roundId = await client.readContract({ ...engine, functionName: 'currentRoundId', args: [BigInt(contentId)] });
  const core = await client.readContract({ ...engine, functionName: 'roundCore', args: [BigInt(contentId), roundId] });
  const now = (await client.getBlock({ blockTag: 'latest' })).timestamp;
  return { contentId, roundId, roundStart: BigInt(core[0]), now };
}
