// The ask side of the service (service-api.md §4–5), the honest protocol: templates, quote, asks (wallet_calls and
// x402), confirm, confirm-feedback-bonus, status and results. HTTP routes and MCP tools both call these functions,
// as on the live service. What each answer looks like is in asks-views.ts; where a hostile service departs from
// this protocol is the AskDecorator below (the scenarios are asks-hostile.ts), applied after the honest answer
// was built, at the same points the live service's answers could be tampered with.
import { isHex, type Account, type Hex, type TransactionReceipt } from 'viem';
import {
  AskFieldError,
  normalizeAsk,
  defaultPaymentMode,
  sameAssetTotal,
  type NormalizedAsk,
  type PaymentMode,
} from '../../protocol/ask-normalize.js';
import { computeAskHashes, walletBoundClientRequestId, x402Nonce } from '../../protocol/ask-hashes.js';
import { TEMPLATES } from '../../protocol/templates.js';
import { ContentRegistry, RoundVotingEngine } from '../contracts/artifacts.js';
import type { SandboxChain } from '../chain.js';
import { sameAddress, sameHex } from '../../hex.js';
import { ApiError, conflict, invalidArguments, invalidRequest } from './envelope.js';
import { bonusPoolsCreated, contentHash, questionsOfSubmit, registryEvents } from '../../protocol/submission.js';
import { bonusPlan, commitmentOf, resolver, walletCallsPlan, x402Plan } from './plans.js';
import type { OperationStore, Operation, TransactionPlan } from './store.js';
import * as views from './asks-views.js';
import { checkRoundBounds } from './preflight.js';
import { TERMINAL_ROUND_STATES, type Obj, type RoundView, type ViewContext } from './asks-views.js';

export interface AskServiceSettings {
  /** Emit requiresAtomicExecution: true on ask and bonus plans. */
  atomicPlans: boolean;
  /** Confirm waits this long for a receipt (the live service waits up to 180 s). */
  receiptTimeoutMs: number;
  /** The polling hint on non-terminal statuses (the live service says 5000). */
  pollAfterMs: number;
}

/**
 * Where a service may depart from the honest protocol. Each hook is handed what the protocol is about to answer
 * (or the moment it would decide) and may change it in place, answer instead or throw. The honest service's hooks
 * change nothing (HONEST); the hostile scenarios are one decorator over these hooks (asks-hostile.ts).
 */
export interface AskDecorator {
  /** A live ask, parsed, before it is hashed and stored: may refuse it. */
  refuse(ask: NormalizedAsk, mode: PaymentMode): void;
  /** A live ask that passed the idempotency check: an answer to give instead of storing it (or undefined), or throw. */
  instead(ask: NormalizedAsk, operationKey: Hex, wallet: Hex): Obj | undefined;
  /** A copy of the ask's transaction plan (wallet calls, or the signed x402 one), as it goes into the answer. */
  askPlan(op: Operation, plan: TransactionPlan): TransactionPlan;
  /** The x402 authorization request, as it goes into the answer. */
  x402Request(request: Obj): Obj;
  /** The whole first answer to a live ask. */
  askAnswer(response: Obj): Obj;
  /** After the HTTP ask route built its answer; `confirm` records transactions as the confirm route does. */
  afterAskRoute(response: Obj, confirm: (operationKey: string, body: unknown) => Promise<Obj>): Promise<void>;
  /** A feedback bonus body that carries its plan (a copy) awaiting the wallet. */
  bonusPlan(op: Operation, bonus: Obj): void;
  /** The answer to a confirm that recorded the ask's transactions. */
  confirmAnswer(answer: Obj): Obj;
  /** A status body, before the hints are added. */
  status(body: Obj): void;
  /** A question's result. */
  result(body: Obj): Obj;
}

/** The honest service: every answer as built. */
export const HONEST: AskDecorator = {
  refuse: () => undefined,
  instead: () => undefined,
  askPlan: (_op, plan) => plan,
  x402Request: (request) => request,
  askAnswer: (response) => response,
  afterAskRoute: async () => undefined,
  bonusPlan: () => undefined,
  confirmAnswer: (answer) => answer,
  status: () => undefined,
  result: (body) => body,
};

const nowIso = () => new Date().toISOString();

interface SettledRun {
  up: number;
  down: number;
  settledAt: string;
}

export class AskService {
  /** The live rule for question.imageUrls (approved uploads of this wallet, stored digest); set by the image side. */
  imagesError: (imageUrls: string[], wallet: string) => string | null = () => null;
  /** Told of each x402 authorization it asks a wallet to sign (the keeper's clock must not jump past it). */
  onX402Request: (wallet: string, validBefore: number) => void = () => {};

  constructor(
    private readonly chain: SandboxChain,
    readonly baseUrl: string,
    readonly settings: AskServiceSettings,
    readonly store: OperationStore,
    private readonly decorator: AskDecorator = HONEST,
  ) {}

  private get addresses() {
    return this.chain.addresses;
  }

  private get view(): ViewContext {
    return { addresses: this.chain.addresses, baseUrl: this.baseUrl, pollAfterMs: this.settings.pollAfterMs };
  }

  templates(): Obj {
    return views.templatesBody();
  }

  private parse(body: unknown): NormalizedAsk {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest();
    try {
      return normalizeAsk(body, { serviceOrigin: this.baseUrl, templates: TEMPLATES });
    } catch (error) {
      if (error instanceof AskFieldError) {
        // Where the service's exact answer is known (the profile's: obsolete seed fields, gated media, x402 limits,
        // the spend cap, unknown audience fields), it is given verbatim.
        const known = error.service;
        if (known)
          throw new ApiError(
            known.status ?? 400,
            known.code,
            known.message,
            known.recoverWith ?? (known.code === 'invalid_media' ? 'fix_media_urls' : 'fix_tool_arguments'),
            { originalCode: known.originalCode },
          );
        if (error.field === 'templateId' || error.field.endsWith('.templateId'))
          throw new ApiError(400, 'unsupported_template', error.first, 'call_rateloop_list_result_templates');
        // The service names one problem: the first.
        throw invalidArguments(error.first);
      }
      throw error;
    }
  }

  private wallet(ask: NormalizedAsk): Hex {
    if (!ask.walletAddress) {
      throw new ApiError(
        400,
        'wallet_address_required',
        'walletAddress is required for permissionless asks and must be the wallet that signs the transaction plan.',
        'include_walletAddress',
      );
    }
    return ask.walletAddress.toLowerCase() as Hex;
  }

  async quote(body: unknown): Promise<Obj> {
    const ask = this.parse(body);
    const wallet = this.wallet(ask);
    // As live: a quote that is not a dry run runs the same chain preflight as an ask.
    if (!ask.dryRun) await checkRoundBounds(this.chain, ask);
    const mode = ask.paymentMode ?? defaultPaymentMode(ask);
    return views.quoteBody(ask, wallet, mode, computeAskHashes(ask, wallet, resolver), this.chain.now(), this.view);
  }

  async ask(body: unknown): Promise<Obj> {
    const b = (body ?? {}) as Obj;
    if (b.mode !== undefined && b.mode !== '' && b.mode !== 'dry_run') {
      throw new ApiError(400, 'mode_unsupported', 'mode must be omitted or dry_run for live asks.', 'omit_mode_or_use_dry_run');
    }
    const ask = this.parse(body);
    if (ask.dryRun) return views.dryRunBody(ask);
    if (ask.chainId !== 31337) {
      throw new ApiError(
        400,
        'invalid_arguments',
        `Chain ${ask.chainId} is not configured on this server: the sandbox chain is 31337.`,
        'fix_tool_arguments',
      );
    }
    const wallet = this.wallet(ask);
    const imagesError = this.imagesError(
      ask.questions.flatMap((q) => q.imageUrls),
      wallet,
    );
    if (imagesError) throw new ApiError(400, 'invalid_media', imagesError, 'fix_media_urls', { originalCode: 'X402QuestionInputError' });
    const mode = ask.paymentMode ?? defaultPaymentMode(ask);
    if (ask.maxPaymentAmount === null)
      throw new ApiError(400, 'invalid_arguments', 'maxPaymentAmount must be a non-negative integer string.', 'fix_tool_arguments');
    // The live order: the chain preflight (round bounds) before the submission record and its idempotency.
    await checkRoundBounds(this.chain, ask);
    this.decorator.refuse(ask, mode);
    const hashes = computeAskHashes(ask, wallet, resolver);
    const existing = this.store.byClientRequest(ask.chainId, hashes.effectiveClientRequestId);
    if (existing && existing.payloadHash !== hashes.payloadHash) {
      throw new ApiError(
        409,
        'duplicate_ask',
        'clientRequestId has already been used for a different question payload.',
        'reuse_original_request_or_change_clientRequestId',
        {
          originalCode: 'X402QuestionConflictError',
        },
      );
    }
    const instead = this.decorator.instead(ask, hashes.operationKey, wallet);
    if (instead) return instead;
    if (existing?.status === 'submitted') return this.statusBody(existing);

    const op: Operation = existing ?? {
      operationKey: hashes.operationKey,
      payloadHash: hashes.payloadHash,
      chainId: ask.chainId,
      clientRequestId: ask.clientRequestId,
      effectiveId: hashes.effectiveClientRequestId,
      wallet,
      paymentMode: mode,
      ask,
      hashes,
      revealCommitment: commitmentOf(ask, hashes, wallet),
      status: 'awaiting_wallet_signature',
      plan: null,
      x402: null,
      contentIds: [],
      bundleId: null,
      rewardPoolId: null,
      transactionHashes: [],
      bonus: ask.feedbackBonus
        ? {
            amount: ask.feedbackBonus.amount,
            asset: ask.feedbackBonus.asset,
            awarder: (ask.feedbackBonus.awarder ?? wallet).toLowerCase() as Hex,
            status: 'pending_question_confirmation',
            roundId: null,
            contentId: null,
            feedbackClosesAt: null,
            poolId: null,
            transactionHashes: [],
            plan: null,
            error: null,
          }
        : null,
      error: null,
      createdAt: nowIso(),
      updatedAt: nowIso(),
    };
    op.paymentMode = mode;
    op.status = 'awaiting_wallet_signature';
    op.updatedAt = nowIso();
    this.store.put(op);

    const response = views.askBody(ask, hashes, op, this.bonusOf(op), this.view);
    if (mode === 'wallet_calls') {
      op.plan = walletCallsPlan(ask, hashes, wallet, this.addresses, this.settings.atomicPlans);
      response.transactionPlan = this.decorator.askPlan(op, structuredClone(op.plan));
      response.wallet = {
        address: wallet,
        fundingMode: 'agent_wallet',
        note: 'Execute the plan from this wallet, in order, then confirm.',
      };
    } else {
      Object.assign(response, this.x402Step(op, b.paymentAuthorization));
    }
    return this.decorator.askAnswer(response);
  }

  /** The HTTP ask route: `ask`, then whatever a hostile service does before it answers (asks-hostile.ts: x402_relayed). */
  async askRoute(body: unknown): Promise<Obj> {
    const response = await this.ask(body);
    await this.decorator.afterAskRoute(response, (operationKey, confirmBody) => this.confirm(operationKey, confirmBody));
    return response;
  }

  private x402Step(op: Operation, paymentAuthorization: unknown): Obj {
    const ask = op.ask;
    const value = sameAssetTotal(ask);
    const bonus = ask.feedbackBonus ? { amount: ask.feedbackBonus.amount, awarder: op.bonus!.awarder } : undefined;
    const nonceFor = (validAfter: bigint, validBefore: bigint) =>
      x402Nonce(
        ask,
        op.hashes,
        this.addresses,
        { from: op.wallet, to: this.addresses.x402QuestionSubmitter, value, validAfter, validBefore },
        bonus && { ...bonus, executeBy: validBefore },
      );
    const common = {
      paymentScheme: 'eip3009_usdc_authorization',
      wallet: { address: op.wallet, fundingMode: 'x402_authorization', note: 'Sign the USDC authorization, then send the one-call plan.' },
    };

    if (paymentAuthorization !== undefined && paymentAuthorization !== null) {
      const pa = paymentAuthorization as Obj;
      const big = (v: unknown, field: string, dflt?: bigint) => {
        if (v === undefined && dflt !== undefined) return dflt;
        if (typeof v !== 'string' && typeof v !== 'number') throw conflict(`paymentAuthorization.${field} must be an integer string.`);
        try {
          return BigInt(v);
        } catch {
          throw conflict(`paymentAuthorization.${field} must be an integer string.`);
        }
      };
      if (typeof pa.signature !== 'string' || !isHex(pa.signature) || (pa.signature.length - 2) / 2 !== 65) {
        throw conflict('paymentAuthorization.signature must be a 65-byte EIP-3009 signature.');
      }
      const validAfter = big(pa.validAfter, 'validAfter', 0n);
      const validBefore = big(pa.validBefore, 'validBefore', BigInt(this.chain.now() + 1800));
      const now = BigInt(this.chain.now());
      if (validBefore <= validAfter) throw conflict('paymentAuthorization.validBefore must be after validAfter.');
      if (validBefore > now + 86400n) throw conflict('paymentAuthorization.validBefore must be within 24 hours.');
      if (String(pa.from).toLowerCase() !== op.wallet) throw conflict('paymentAuthorization.from must be the ask wallet.');
      if (String(pa.to).toLowerCase() !== this.addresses.x402QuestionSubmitter.toLowerCase())
        throw conflict('paymentAuthorization.to must be the X402QuestionSubmitter.');
      if (big(pa.value, 'value') !== value)
        throw conflict('paymentAuthorization.value must equal the bounty plus any USDC Feedback Bonus.');
      const nonce = nonceFor(validAfter, validBefore);
      if (String(pa.nonce).toLowerCase() !== nonce) throw conflict('paymentAuthorization.nonce is not bound to this ask.');
      op.x402 = {
        validAfter,
        validBefore,
        nonce,
        value,
        signed: {
          from: op.wallet,
          to: this.addresses.x402QuestionSubmitter,
          value,
          validAfter,
          validBefore,
          nonce,
          signature: pa.signature as Hex,
        },
      };
    }
    if (op.x402?.signed) {
      op.plan = x402Plan(op.ask, op.hashes, op.x402, op.bonus?.awarder ?? null, this.addresses);
      return {
        ...common,
        nextAction: 'submit_x402_transaction',
        transactionPlan: this.decorator.askPlan(op, structuredClone(op.plan)),
        x402AuthorizationRequest: null,
      };
    }
    const validAfter = 0n;
    const validBefore = BigInt(this.chain.now() + 1800);
    op.x402 = { validAfter, validBefore, nonce: nonceFor(validAfter, validBefore), value };
    this.onX402Request(op.wallet, Number(validBefore));
    return {
      ...common,
      nextAction: 'sign_x402_authorization',
      transactionPlan: null,
      x402AuthorizationRequest: this.decorator.x402Request(views.x402RequestBody(op, this.addresses)),
    };
  }

  // ---- confirm ----

  private async receipts(hashes: unknown): Promise<{ hashes: Hex[]; receipts: TransactionReceipt[] }> {
    if (!Array.isArray(hashes)) throw invalidArguments('transactionHashes must be an array.');
    if (hashes.length === 0) throw invalidArguments('transactionHashes must contain at least one transaction hash.');
    if (hashes.length > 32) throw invalidArguments('transactionHashes may contain at most 32 transaction hashes.');
    for (const h of hashes)
      if (typeof h !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(h))
        throw invalidArguments('transactionHashes must be 0x-prefixed 32-byte hashes.');
    const receipts: TransactionReceipt[] = [];
    for (const hash of hashes as Hex[]) {
      const deadline = Date.now() + this.settings.receiptTimeoutMs;
      for (;;) {
        try {
          receipts.push(await this.chain.publicClient.getTransactionReceipt({ hash }));
          break;
        } catch {
          if (Date.now() > deadline) throw conflict(`Transaction ${hash} was not mined in time.`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    return { hashes: hashes as Hex[], receipts };
  }

  async confirm(operationKey: string, body: unknown): Promise<Obj> {
    const op = this.store.get(operationKey);
    if (!op) throw conflict('Agent wallet submission plan was not found.');
    if (op.status === 'submitted') return this.statusBody(op);
    const { hashes, receipts } = await this.receipts((body as Obj | null)?.transactionHashes);
    // As the live service: the receipts must carry this plan's questions (by content hash) from the planned wallet.
    const submit = op.plan?.calls[op.plan.calls.length - 1];
    const expected = (submit ? questionsOfSubmit(submit.data) : []).map(contentHash);
    const contents = registryEvents(
      receipts.filter((r) => r.status === 'success').flatMap((r) => r.logs),
      this.addresses.contentRegistry,
    ).contents;
    if (contents.length === 0) throw conflict('Confirmed transactions did not include a RateLoop question submission.');
    const mine = expected.map((h) => contents.find((c) => sameHex(c.contentHash, h)));
    if (mine.some((c) => !c || !sameAddress(c.submitter, op.wallet))) {
      throw conflict('Confirmed submission was not emitted for the planned wallet address.');
    }
    op.contentIds = mine.map((c) => String(c!.contentId));
    const bundle = registryEvents(
      receipts.flatMap((r) => r.logs),
      this.addresses.contentRegistry,
    ).bundles[0];
    op.bundleId = bundle ? String(bundle.bundleId) : null;
    op.rewardPoolId = op.contentIds[0]!;
    op.transactionHashes = hashes;
    op.status = 'submitted';
    op.updatedAt = nowIso();
    if (op.bonus) {
      const contentId = BigInt(op.contentIds[0]!);
      const roundId = (await this.chain.publicClient.readContract({
        address: this.addresses.roundVotingEngine,
        abi: RoundVotingEngine.abi,
        functionName: 'currentRoundId',
        args: [contentId],
      })) as bigint;
      const core = (await this.chain.publicClient.readContract({
        address: this.addresses.roundVotingEngine,
        abi: RoundVotingEngine.abi,
        functionName: 'roundCore',
        args: [contentId, roundId],
      })) as readonly [number, ...unknown[]];
      const closesAt = BigInt(core[0]) + BigInt(op.ask.roundConfig.maxDuration);
      op.bonus.contentId = contentId.toString();
      op.bonus.roundId = roundId.toString();
      op.bonus.feedbackClosesAt = closesAt.toString();
      if (op.paymentMode === 'x402_authorization') {
        const pool = this.bonusPools(receipts).find((p) => p.contentId === contentId);
        op.bonus.status = pool ? 'funded' : 'failed';
        op.bonus.poolId = pool ? pool.poolId.toString() : null;
        op.bonus.transactionHashes = hashes;
      } else {
        op.bonus.status = 'awaiting_wallet_signature';
        op.bonus.plan = bonusPlan(op.bonus, contentId, roundId, closesAt, this.addresses, this.settings.atomicPlans);
      }
    }
    return this.decorator.confirmAnswer(this.statusBody(op));
  }

  private bonusPools(receipts: TransactionReceipt[]) {
    return bonusPoolsCreated(
      receipts.filter((r) => r.status === 'success').flatMap((r) => r.logs),
      this.addresses.feedbackBonusEscrow,
    );
  }

  async confirmBonus(operationKey: string, body: unknown): Promise<Obj> {
    const op = this.store.get(operationKey);
    if (!op) throw conflict('Agent wallet submission plan was not found.');
    if (!op.bonus) throw conflict('Feedback Bonus was not requested for this ask.');
    if (op.status !== 'submitted') throw conflict('Confirm the ask transactions before the Feedback Bonus.');
    if (op.bonus.status !== 'funded') {
      const { hashes, receipts } = await this.receipts((body as Obj | null)?.transactionHashes);
      const b = op.bonus;
      const pool = this.bonusPools(receipts).find(
        (p) =>
          p.contentId.toString() === b.contentId &&
          p.roundId.toString() === b.roundId &&
          sameAddress(p.awarder, b.awarder) &&
          sameAddress(p.funder, op.wallet) &&
          p.amount === b.amount,
      );
      if (!pool) throw conflict('Confirmed transactions did not create a Feedback Bonus pool.');
      b.status = 'funded';
      b.poolId = pool.poolId.toString();
      b.transactionHashes = hashes;
      b.plan = null;
    }
    return { feedbackBonus: this.bonusOf(op), operationKey: op.operationKey, status: 'submitted', warnings: [] };
  }

  /** The ask's feedbackBonus as answered: its body, the plan in it (a copy) decorated while it awaits the wallet. */
  private bonusOf(op: Operation): Obj {
    if (!op.bonus) return views.noBonusBody();
    const out = views.bonusBody(op, this.addresses);
    if (out.transactionPlan !== undefined) this.decorator.bonusPlan(op, out);
    return out;
  }

  // ---- status and results ----

  /** A question the registry holds: the live `contents` getter reads zeros (a zero submitter) for an unknown id. */
  private async contentExists(contentId: bigint): Promise<boolean> {
    const [, , submitter] = (await this.chain.publicClient.readContract({
      address: this.addresses.contentRegistry,
      abi: ContentRegistry.abi,
      functionName: 'contents',
      args: [contentId],
    })) as readonly [bigint, Hex, Hex, ...unknown[]];
    return BigInt(submitter) !== 0n;
  }

  /**
   * A round's revealed votes, from the engine's RbtsVoteRevealed events (as the live service's indexer reads them):
   * counts and stakes (the event's effective weight) each way.
   */
  private async tallyOf(contentId: bigint, roundId: bigint) {
    const logs = await this.chain.publicClient.getContractEvents({
      address: this.addresses.roundVotingEngine,
      abi: RoundVotingEngine.abi,
      eventName: 'RbtsVoteRevealed',
      args: { contentId, roundId },
      fromBlock: 0n,
    });
    const t = { upCount: 0, downCount: 0, upStake: 0n, downStake: 0n };
    for (const l of logs) {
      const { isUp, effectiveWeight } = l.args as { isUp: boolean; effectiveWeight: bigint };
      if (isUp) {
        t.upCount++;
        t.upStake += effectiveWeight;
      } else {
        t.downCount++;
        t.downStake += effectiveWeight;
      }
    }
    return t;
  }

  /** When a SettlementPending round became ready: the block time of its RbtsSettlementPending event. */
  private async pendingSince(contentId: bigint, roundId: bigint): Promise<number> {
    const [log] = await this.chain.publicClient.getContractEvents({
      address: this.addresses.roundVotingEngine,
      abi: RoundVotingEngine.abi,
      eventName: 'RbtsSettlementPending',
      args: { contentId, roundId },
      fromBlock: 0n,
    });
    if (!log?.blockNumber) return 0;
    return Number((await this.chain.publicClient.getBlock({ blockNumber: log.blockNumber })).timestamp);
  }

  private async roundOf(contentId: bigint): Promise<RoundView> {
    const engine = { address: this.addresses.roundVotingEngine, abi: RoundVotingEngine.abi } as const;
    const roundId = (await this.chain.publicClient.readContract({
      ...engine,
      functionName: 'currentRoundId',
      args: [contentId],
    })) as bigint;
    const core = (await this.chain.publicClient.readContract({
      ...engine,
      functionName: 'roundCore',
      args: [contentId, roundId],
    })) as readonly [number, number, number, number, bigint, number, number, number];
    const tally = await this.tallyOf(contentId, roundId);
    // A decided round's rating (the engine's rounding of the up stake's share); none before or without a verdict.
    const total = tally.upStake + tally.downStake;
    const decided = (core[1] === 1 || core[1] === 3 || core[1] === 5) && total > 0n;
    return {
      roundId,
      payoutReadyAt: core[1] === 5 ? await this.pendingSince(contentId, roundId) : 0,
      startTime: core[0],
      state: core[1],
      voteCount: core[2],
      revealedCount: core[3],
      totalStake: core[4],
      settledAt: core[6],
      ratingBps: decided ? Number((tally.upStake * 10000n + total / 2n) / total) : 0,
      ...tally,
    };
  }

  /** Test control: a simulated account asks (plan built and executed here, as a wallet would). */
  async submitDirectly(body: Obj, account: Account): Promise<string> {
    const response = await this.ask(body);
    const calls = (response.transactionPlan as TransactionPlan).calls;
    const hashes: Hex[] = [];
    for (const call of calls) {
      if (call.phase === 'submit_question') await this.chain.advanceTime(1);
      // In the account's lane: it is a simulated rater's, which votes from the same account.
      hashes.push(await this.chain.sendData(account, call.to, call.data));
    }
    const confirmed = await this.confirm(response.operationKey as string, { transactionHashes: hashes });
    return String(confirmed.contentId);
  }

  /**
   * Settled questions, as evidence runs (run_<contentId>). Every question the sandbox ever took is looked at (a sandbox
   * shared by many test files holds hundreds), so the reads go out in parallel, a question whose round is not settled
   * costs two reads, and a settled round (final: it never changes) is read in full only once.
   */
  async settledRuns(): Promise<(SettledRun & { runId: string; contentId: string; title: string })[]> {
    const questions = this.store.all().flatMap((op) => op.contentIds.map((id, i) => ({ id, title: op.ask.questions[i]?.title ?? '' })));
    const out = [];
    for (let i = 0; i < questions.length; i += 32) {
      const chunk = questions.slice(i, i + 32);
      const runs = await Promise.all(chunk.map((q) => this.settledRunOf(q.id)));
      for (const [j, run] of runs.entries())
        if (run) out.push({ runId: `run_${chunk[j]!.id}`, contentId: chunk[j]!.id, title: chunk[j]!.title, ...run });
    }
    return out;
  }

  private readonly settledSeen = new Map<string, { roundId: bigint; run: SettledRun }>();

  /** The current round's tally when it is settled. */
  private async settledRunOf(id: string): Promise<SettledRun | undefined> {
    const engine = { address: this.addresses.roundVotingEngine, abi: RoundVotingEngine.abi } as const;
    const contentId = BigInt(id);
    const roundId = (await this.chain.publicClient.readContract({
      ...engine,
      functionName: 'currentRoundId',
      args: [contentId],
    })) as bigint;
    const seen = this.settledSeen.get(id);
    if (seen?.roundId === roundId) return seen.run;
    const core = (await this.chain.publicClient.readContract({
      ...engine,
      functionName: 'roundCore',
      args: [contentId, roundId],
    })) as readonly [number, number, number, number, bigint, number, number, number];
    if (core[1] !== 1) return undefined;
    const tally = await this.tallyOf(contentId, roundId);
    const run = { up: tally.upCount, down: tally.downCount, settledAt: new Date(core[6] * 1000).toISOString() };
    this.settledSeen.set(id, { roundId, run });
    return run;
  }

  async readyOf(op: Operation): Promise<boolean> {
    if (op.status !== 'submitted' || op.contentIds.length === 0) return false;
    for (const id of op.contentIds) if (!TERMINAL_ROUND_STATES.has((await this.roundOf(BigInt(id))).state)) return false;
    return true;
  }

  async status(operationKey: string): Promise<Obj> {
    const op = this.store.get(operationKey);
    return op ? this.statusWithHints(op) : this.notFoundBody();
  }

  notFoundBody(): Obj {
    return views.notFoundBody();
  }

  lookup(query: { chainId?: string | null; clientRequestId?: string | null; walletAddress?: string | null }): Operation | undefined {
    const chainId = Number(query.chainId);
    if (!Number.isSafeInteger(chainId) || chainId <= 0 || !query.clientRequestId || !query.walletAddress) {
      throw invalidArguments('Provide operationKey or chainId, clientRequestId, and walletAddress.');
    }
    return this.store.byClientRequest(chainId, walletBoundClientRequestId(chainId, query.walletAddress, query.clientRequestId));
  }

  async statusWithHints(op: Operation): Promise<Obj> {
    const body = this.statusBody(op);
    const ready = await this.readyOf(op);
    this.decorator.status(body);
    return views.withHints(body, op, ready, this.settings.pollAfterMs);
  }

  statusBody(op: Operation): Obj {
    return views.statusBody(op, this.bonusOf(op), this.view);
  }

  async result(operationKey: string | undefined, op: Operation | undefined, contentIdParam?: string | null): Promise<Obj> {
    if (!op) return views.resultNotFoundBody(operationKey);
    let contentId = op.contentIds[0];
    if (contentIdParam) {
      if (!op.contentIds.includes(contentIdParam))
        throw new ApiError(404, 'not_found', 'contentId does not belong to this ask.', 'verify_operation_identifiers');
      contentId = contentIdParam;
    } else if (op.contentIds.length > 1) {
      throw conflict('This ask produced multiple contentIds. Provide contentId to fetch a specific result.');
    }
    const operation = await this.statusWithHints(op);
    if (op.status !== 'submitted' || !contentId) return views.resultPendingBody(operation);
    return this.resultForContent(BigInt(contentId), operation);
  }

  async resultForContent(contentId: bigint, operation: Obj | null): Promise<Obj> {
    // As the live service (0b442ae): by content alone the result comes from its indexer, whose 404 for a question it
    // does not know becomes the route's error (HTTP 404, invalid_arguments), never a pending package.
    if (operation === null && !(await this.contentExists(contentId)))
      throw new ApiError(404, 'invalid_arguments', 'Ponder request failed: 404 Not Found', 'fix_tool_arguments', {
        originalCode: 'PonderHttpError',
      });
    return this.decorator.result(views.resultBody(contentId, await this.roundOf(contentId), operation, this.baseUrl, this.chain.now()));
  }
}
