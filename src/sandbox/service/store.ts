// In-memory records of the sandbox service: asks (operations), keyed by operationKey and by
// (chainId, effective clientRequestId) for idempotency and by-client-request lookups.
import type { Hex } from 'viem';
import type { NormalizedAsk, PaymentMode } from '../../protocol/ask-normalize.js';
import type { AskHashes } from '../../protocol/ask-hashes.js';

export interface PlanCall {
  id: string;
  phase: string;
  functionName: string;
  description: string;
  to: Hex;
  data: Hex;
  value: string;
  waitAfterMs?: number;
}

export interface TransactionPlan {
  calls: PlanCall[];
  requiresOrderedExecution: true;
  requiresAtomicExecution?: boolean;
}

export interface BonusRecord {
  amount: bigint;
  asset: 'USDC' | 'LREP';
  awarder: Hex;
  status: 'pending_question_confirmation' | 'awaiting_wallet_signature' | 'funded' | 'failed';
  roundId: string | null;
  contentId: string | null;
  feedbackClosesAt: string | null;
  poolId: string | null;
  transactionHashes: Hex[];
  plan: TransactionPlan | null;
  error: string | null;
}

export interface X402State {
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  value: bigint;
  /** The authorization the wallet sent back (stored so a retry may omit it). */
  signed?: { from: Hex; to: Hex; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex; signature: Hex };
}

export interface Operation {
  operationKey: Hex;
  payloadHash: string;
  chainId: number;
  clientRequestId: string;
  effectiveId: string;
  wallet: Hex;
  paymentMode: PaymentMode;
  ask: NormalizedAsk;
  hashes: AskHashes;
  revealCommitment: Hex;
  status: 'awaiting_wallet_signature' | 'submitted' | 'failed';
  plan: TransactionPlan | null;
  x402: X402State | null;
  contentIds: string[];
  bundleId: string | null;
  rewardPoolId: string | null;
  transactionHashes: Hex[];
  bonus: BonusRecord | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export class OperationStore {
  private readonly byKey = new Map<string, Operation>();
  private readonly byClient = new Map<string, string>();

  get(operationKey: string): Operation | undefined {
    return this.byKey.get(operationKey.toLowerCase());
  }

  byClientRequest(chainId: number, effectiveId: string): Operation | undefined {
    const key = this.byClient.get(`${chainId}:${effectiveId}`);
    return key ? this.byKey.get(key) : undefined;
  }

  put(op: Operation): void {
    this.byKey.set(op.operationKey.toLowerCase(), op);
    this.byClient.set(`${op.chainId}:${op.effectiveId}`, op.operationKey.toLowerCase());
  }

  all(): Operation[] {
    return [...this.byKey.values()];
  }
}
