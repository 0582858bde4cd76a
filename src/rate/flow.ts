import { decodeFunctionData, type Hex, type PublicClient } from 'viem';
import type { Context } from '../context.js';
import { ChainError, RefusedError, ServiceError, UsageError, asKnownError, noAnswerFromNode, nodeErrorNotRevert } from '../errors.js';
import { sameAddress, sameHex } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import { Operation, operationId, operationsOf } from '../store/operation.js';
import { isLive, type BuiltCommitRecord, type Kind } from '../store/records.js';
import { SpendLedger } from '../store/ledger.js';
import { checkSameChain, setAsideIfStale } from '../store/chain-identity.js';
import type { Store } from '../store/db.js';
import type { PolicyGate } from '../policy/gate.js';
import { advisoryRecorderAbi, votingEngineAbi } from '../protocol/abi.js';
import type { McpClient, ToolArgs } from '../service/mcp.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { paidRound, refuseDelegationIfUnsupported } from '../ask/prepare.js';
import { buildCommitVoteParams, type BuiltCommit } from '../vote/build.js';
import { roundTime, targetRoundWindow } from '../vote/drand.js';
import { commitHash } from '../vote/commit.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import { checkStakeBounds, parseStake, predictedUpBps, VoteInputError } from '../vote/stake.js';
import { Executor } from '../wallet/executor.js';
import { acceptTermsAndFetch, type GatedItem, type TermsRecord } from './gated.js';
import { checkOpenRoundPlan, checkRatingContracts, checkRatingPlan } from '../wallet/rating-guard.js';
import { refuse, type PlanCall } from '../wallet/plan-guard.js';
import { allowanceShortfall, revertData, revertReason } from '../wallet/revert-reason.js';
import { shortMessage } from '../chains/client.js';
import { checkAddress } from '../address.js';
import { checkRateFunds } from './funds.js';
import { latestCount, walletMemoryCheck } from '../store/nonce-mark.js';

export interface RateOptions {
  contentId: string;
  isUp: boolean;
  prediction: string;
  stake: string;
  frontend?: string;
  acceptTerms: boolean;
  atomic: boolean;
  /** Vote again on a question this wallet voted on in an earlier round: a new operation (the earlier vote is kept). */
  newRound?: boolean;
  /** Set aside a journal of this vote written on another instance of the chain (a restarted sandbox). */
  setAsideStale?: boolean;
  /** Wait in place while a slot's fate is not final (issue 35), instead of stopping with exit 4. */
  waitFinal?: boolean;
  /** Confirm the wallet's transactions that loopsign's database does not know (src/store/nonce-mark.ts). */
  acceptForeignNonces?: boolean;
}

/**
 * The rating context (rateloop_get_rating_context) as the vote uses it. Only hints come from it — the round, the stake
 * and the drand network are the chain's and the pinned ones — but a hint that is not of its form is a lying service:
 * refused (exit 5) before anything is signed, never a parser's exception.
 */
export interface RatingContext {
  /** The document as the service sent it: the gated-context list is read from it (src/rate/gated.ts). */
  doc: ServiceDoc;
  contracts: ServiceDoc | undefined;
  openRoundTransactionPlan: unknown;
  gated: boolean;
  /** runtime.targetRound: a suggestion, used only inside the window the round accepts. */
  targetRound: string | number | undefined;
  /** runtime.drandChainHash, compared with the pinned network's. */
  drandChainHash: string | undefined;
}

export function readRatingContext(doc: ServiceDoc): RatingContext {
  const runtime = objectField(doc, 'runtime');
  const target = runtime?.targetRound;
  // The forms the commit builder reads (src/vote/build.ts): a non-negative safe integer, as a number or in digits.
  const round = typeof target === 'string' && /^[0-9]+$/.test(target) ? Number(target) : target;
  if (target !== undefined && target !== null && !(typeof round === 'number' && Number.isSafeInteger(round) && round >= 0))
    refuse('malformed_response', `the rating context's runtime.targetRound ${JSON.stringify(target)} is not a drand round number`);
  const hash = runtime?.drandChainHash;
  return {
    doc,
    contracts: objectField(doc, 'contracts'),
    openRoundTransactionPlan: doc.openRoundTransactionPlan,
    gated: objectField(doc, 'content')?.contextAccess === 'gated',
    targetRound: typeof target === 'number' || typeof target === 'string' ? target : undefined,
    // Any value given is compared as text (a non-string is then another network, refused as one); none is no claim.
    drandChainHash: hash ? String(hash) : undefined,
  };
}

export function parseRateInputs(o: { contentId: string; prediction: string; stake: string; frontend?: string }) {
  if (!/^[1-9][0-9]*$/.test(o.contentId))
    throw new UsageError('invalid_content_id', `--content-id ${o.contentId} must be a positive integer`);
  if (o.frontend !== undefined) checkAddress(o.frontend, '--frontend', 'invalid_frontend');
  try {
    const stake = parseStake(o.stake);
    checkStakeBounds(stake);
    return { contentId: BigInt(o.contentId), stake, bps: predictedUpBps(o.prediction) };
  } catch (error) {
    if (error instanceof VoteInputError)
      throw new UsageError('invalid_vote', error.forFlags(), {
        details: { field: error.field, ...(error.flag ? { flag: error.flag } : {}) },
      });
    throw error;
  }
}

async function onChainRound(client: PublicClient, chain: ChainConfig, contentId: bigint) {
  const engine = { address: chain.contracts.roundVotingEngine as Hex, abi: votingEngineAbi } as const;
  const [roundId, reference] = await client.readContract({ ...engine, functionName: 'previewCommitContext', args: [contentId] });
  if (roundId === 0n) return undefined;
  const core = await client.readContract({ ...engine, functionName: 'roundCore', args: [contentId, roundId] });
  const config = await client.readContract({ ...engine, functionName: 'roundConfigSnapshot', args: [contentId, roundId] });
  return { roundId, reference: Number(reference), startTime: Number(core[0]), epochDuration: Number(config[0]) };
}

export async function runRate(ctx: Context, opts: RateOptions): Promise<RateOutcome> {
  const input = parseRateInputs(opts);
  const settings = await paidRound(ctx);
  await ctx.service({ spends: true }); // a vote stakes: the service origin must be named, never defaulted
  const chain = settings.chain;
  if (!chain.contracts.roundVotingEngine)
    throw new UsageError('untrusted_chain_config', `no trusted RoundVotingEngine is configured for chain ${chain.chainId}`);
  const signer = await ctx.wallet();
  if (opts.atomic) await refuseDelegationIfUnsupported(signer, ctx);
  const wallet = signer.address.toLowerCase() as Hex;
  const { client } = await ctx.chain();
  // Read before the database is (src/store/nonce-mark.ts), used before the first signature; a failure counts only if
  // something is to be signed.
  const walletCount = latestCount(client, wallet);
  walletCount.catch(() => undefined);
  const store = await ctx.store();
  let id = latestVote(store, chain.chainId, wallet, opts.contentId);
  if (opts.setAsideStale) {
    const aside = await setAsideIfStale(store, client, id, chain);
    if (aside)
      ctx.out.warn(
        `the journal of this vote belonged to another instance of chain ${chain.chainId}; it is kept as ${aside} and the vote starts afresh`,
      );
    id = latestVote(store, chain.chainId, wallet, opts.contentId);
  }
  const policy = await ctx.policy();
  // The preflight leaves out of the windows only what the operation this vote will be recorded under has signed: with
  // --new-round after a vote of an earlier round, that is the next operation, and the earlier vote's stake still counts.
  await policy.preflightRating(chain, opts.contentId, input.stake, await preflightOperation(store, client, chain, wallet, opts, id));
  const account = await signer.account;
  const mcp = await ctx.mcp();
  let journal = await Operation.open(store, 'rate', id, { chainId: chain.chainId, wallet, data: { contentId: opts.contentId } });
  // The database's memory of the wallet, checked once before the vote's first signature, as an ask's is.
  const checkWalletMemory = walletMemoryCheck({
    store,
    mark: () => ({ chainId: chain.chainId, genesis: journal.chainGenesis ?? '', wallet }),
    count: walletCount,
    accept: opts.acceptForeignNonces === true,
    now: () => ctx.clock.now(),
    warn: (m) => ctx.out.warn(m),
  });
  const executor = async () => {
    await checkWalletMemory();
    return new Executor({
      client,
      account,
      chain,
      op: journal,
      out: ctx.out,
      ledger: rateLedger(journal, chain, wallet, input.stake, policy),
      allowDelegation: opts.atomic,
      cannotDelegate: signer.capabilities.authorization ? undefined : (signer.capabilities.authorizationReason ?? 'not supported'),
      maxFeePerGas: settings.maxFeePerGas.value,
      waitFinal: opts.waitFinal === true,
      deleGator: async () =>
        (await import('../chains/delegation.js')).trustedDeleGator(client, chain.chainId, settings.manifest, ctx.paths.state),
    });
  };
  try {
    await checkSameChain(client, journal, '--set-aside-stale');
    // One vote per operation, never overwritten: a vote journaled for an earlier round stays as it is, and voting
    // again (a later round) is a new operation, only on an explicit --new-round.
    const earlier = journal.data.commit;
    const current = await onChainRound(client, chain, input.contentId);
    if (earlier && earlier.roundId !== current?.roundId.toString()) {
      if (!opts.newRound) {
        throw new UsageError(
          'voted_in_earlier_round',
          `this wallet's vote on question ${opts.contentId} is journaled for round ${earlier.roundId} (${journal.step === 'rate:confirmed' ? 'committed' : 'not confirmed'}); the question ${current ? `is now in round ${current.roundId}` : 'has no open round now'}. Nothing was sent`,
          {
            hint: 'a vote in another round is a new vote: rerun with --new-round to cast it (the earlier one is kept; `loopsign rate status` lists both)',
          },
        );
      }
      const previous = journal.id;
      await journal.close();
      ctx.out.progress(
        'rate.new_round',
        `voting again on question ${opts.contentId}: a new operation (the round ${earlier.roundId} vote stays in ${previous})`,
      );
      journal = await Operation.open(store, 'rate', nextVote(chain, wallet, opts.contentId, previous), {
        chainId: chain.chainId,
        wallet,
        data: { contentId: opts.contentId, previous },
      });
      await checkSameChain(client, journal, '--set-aside-stale');
    }
    // A fresh vote: nothing is signed unless the wallet holds the stake and gas (a resumed one has paid some already).
    if (journal.txs().length === 0 && journal.step !== 'rate:confirmed') await checkRateFunds(client, chain, wallet, input.stake, ctx.out);
    const args = { contentId: opts.contentId, chainId: chain.chainId, walletAddress: wallet };
    ctx.out.progress('rate.context', `reading the rating context of question ${opts.contentId}`);
    let context = readRatingContext(await mcp.call('rateloop_get_rating_context', { ...args, stakeWei: input.stake.toString() }));
    checkRatingContracts(chain, context.contracts);

    let round = current;
    if (!round) {
      const calls = checkOpenRoundPlan(chain, context.openRoundTransactionPlan, input.contentId);
      ctx.out.progress('rate.open_round', 'the round is not open: opening it (the plan passed its checks)');
      await (await executor()).execute(`open:${Date.now()}`, calls, 'ordered');
      context = readRatingContext(await mcp.call('rateloop_get_rating_context', { ...args, stakeWei: input.stake.toString() }));
      round = await onChainRound(client, chain, input.contentId);
      if (!round) throw new ChainError('round_not_open', 'the round is still not open after openRound');
    }

    const gated = context.gated;
    const existing = journal.data.commit;
    const sameRound = existing !== undefined && existing.roundId === round.roundId.toString();
    // A journaled vote is reused only if it is the vote these flags ask for (issue 11 §4): never a different one.
    if (sameRound) checkResumedVote(existing, input, opts, wallet, input.contentId);
    if (sameRound && journal.step === 'rate:confirmed') {
      // A rerun after success: this wallet already voted in this round; report that vote and sign nothing (not
      // even the terms of gated content again).
      ctx.out.progress('rate.resume', `already committed in round ${existing.roundId}; nothing is sent again`);
      const hashes = journal.data.confirmed?.transactionHashes ?? [];
      return rateOutcome(chain, existing, {
        contentId: opts.contentId,
        hashes,
        transactions: 0,
        gated,
        gatedContext: [],
        operation: journal.id,
        resumed: true,
      });
    }
    let gatedContext: GatedItem[] = [];
    let terms: TermsRecord | undefined;
    if (gated) {
      if (input.stake === 0n)
        throw new UsageError(
          'advisory_on_gated',
          'advisory (zero-stake) votes are not allowed on gated content; stake between 1 and 10 LREP',
        );
      ({ context: gatedContext, terms } = await acceptTermsAndFetch(ctx, mcp, account, wallet, args, context.doc, {
        accept: opts.acceptTerms,
        serviceBaseUrl: settings.baseUrl.value!,
      }));
    }

    // The commit: from on-chain round data and the pinned drand network; the service's runtime is only a hint.
    let commit: BuiltCommit;
    const now = Number((await client.getBlock({ blockTag: 'latest' })).timestamp);
    const stage = `rate:${round.roundId}`;
    // A commit some live transaction carries is resumed as it is; one the round no longer accepts is built again.
    const carried = sameRound && journal.txsFor(stage).some((t) => isLive(t) && carriesCommit(t.raw, wallet, existing.commitHash));
    const stillValid = sameRound && (carried || targetStillValid(existing, round, chain, now));
    if (sameRound && !stillValid) {
      ctx.out.progress(
        'rate.rebuild',
        `the journaled commit targets drand round ${existing.targetRound}, which this round no longer accepts: building the same vote again for the current window`,
      );
      // What the old plan sent (an approval, a reverted commit) stays counted, in a stage of its own, so the new
      // plan is not taken for a changed one; the old commit is kept beside the new one, never overwritten.
      for (const t of journal.txsFor(stage))
        await journal.updateTx(t.hash, { stage: `${stage}:superseded:${existing.commitHash.slice(2, 10)}` });
      await journal.save({ ratePlan: undefined, superseded: [...(journal.data.superseded ?? []), existing] });
    }
    if (sameRound && stillValid) {
      ctx.out.progress('rate.resume', 'resuming with the commit built before (same salt and ciphertext)');
      commit = existing;
    } else {
      const d = chain.drand;
      commit = await buildCommitVoteParams(
        {
          voter: wallet,
          contentId: input.contentId,
          isUp: opts.isUp,
          predictedUpPercent: opts.prediction,
          stakeAmount: opts.stake,
          epochDuration: round.epochDuration,
          roundId: round.roundId,
          roundReferenceRatingBps: round.reference,
          frontend: opts.frontend as Hex | undefined,
          runtime: {
            targetRound: context.targetRound,
            drandChainHash: d.chainHash,
            drandGenesisTimeSeconds: d.genesis,
            drandPeriodSeconds: d.period,
            roundStartTimeSeconds: round.startTime,
          },
          now,
        },
        [d],
      );
      if (context.drandChainHash !== undefined && context.drandChainHash.replace(/^0x/, '').toLowerCase() !== d.chainHash) {
        throw new RefusedError(
          'unsupported_drand_chain',
          `the rating context names drand chain ${context.drandChainHash}, not the pinned ${d.name} network`,
        );
      }
      // Kept before anything is sent: the only way to prove or re-derive the vote later.
      // A plan journaled for an earlier round must not be reused with this commit.
      await journal.setStep('rate:built', { commit, ratePlan: undefined });
    }

    // Planned and executed under the wallet's claim: the service leaves the approval out when the allowance covers the
    // stake, so no other vote of this wallet may spend that allowance between this plan and its commit.
    const ex = await executor();
    const { hashes, transactions } = await ex.withWalletLock(async () => {
      // On resume the journaled plan is reused once anything of it was signed and can still reach the chain: a fresh
      // one may differ (say, no approval once the stake moved), and call indexes must keep meaning the transactions
      // already sent. While nothing is, it is planned again: a vote of this wallet may have spent the allowance it
      // counted on since (its commit would then never pass), and may have taken the nonce of a commit signed but never
      // sent (settled first: dropped, it pays nothing and carries no call). It is checked again either way.
      const stage = `rate:${commit.roundId}`;
      // What a replaced commit's plan signed (an approval of the same stake, its commit never sent) is settled first:
      // found on chain or sent byte for byte, so the fresh plan finds its allowance instead of approving the stake a
      // second time; dropped once its slot is void (its nonce used in the finalized chain by another transaction, such
      // as software outside loopsign: the vote then stops until that is final, nonce_not_final, and goes on after).
      // Left alone, it counted for ever.
      for (const old of new Set(
        journal
          .txs()
          .filter((t) => isLive(t) && t.stage.startsWith(`${stage}:superseded:`))
          .map((t) => t.stage),
      ))
        await ex.settleJournaled(old);
      await ex.settleJournaled(stage);
      const journaledPlan = journal.txsFor(stage).some(isLive) ? journal.data.ratePlan : undefined;
      const prepared = journaledPlan ?? (await prepareRating(ctx, mcp, args, commit));
      const calls = checkRatingPlan(chain, prepared, commit, input.contentId);
      if (!journaledPlan && calls.length === 2) await simulateCommitFirst(client, wallet, calls[1]!, (m) => ctx.out.warn(m));
      if (!journaledPlan) await journal.setStep('rate:planned', { ratePlan: prepared });
      ctx.out.progress('rate.checked', `the rating plan passed every check (${calls.length} call${calls.length === 1 ? '' : 's'})`);
      return ex.execute(stage, calls, opts.atomic ? 'segmented' : 'ordered');
    });
    ctx.out.progress('rate.confirm', 'confirming the commit with the service');
    const confirmed = await mcp.call('rateloop_confirm_rating_transactions', {
      ...args,
      roundId: commit.roundId,
      commitHash: commit.commitHash,
      transactionHashes: hashes,
    });
    if (confirmed.status !== 'committed')
      throw new ServiceError('rating_not_confirmed', `the service reports the rating as ${String(confirmed.status)}`);
    await journal.setStep('rate:confirmed', { confirmed: { transactionHashes: hashes } });
    return rateOutcome(chain, commit, {
      contentId: opts.contentId,
      hashes,
      transactions,
      gated,
      gatedContext,
      terms,
      operation: journal.id,
      resumed: false,
    });
  } finally {
    await journal.close();
    await mcp.close();
  }
}

/**
 * Before a fresh plan's approval is signed, its commit is simulated on its own: the approval is not there yet, so the
 * token's allowance check is expected to fail, and the engine checks the vote (already committed, round closed,
 * target round out of window …) before it pulls the stake. Any other revert would leave the wallet an approval it
 * never needed (counted by the policy, spendable by the engine) before the commit's own simulation said no: refused
 * with nothing signed.
 */
async function simulateCommitFirst(client: PublicClient, wallet: Hex, commit: PlanCall, warn: (message: string) => void): Promise<void> {
  try {
    await client.call({ account: wallet, to: commit.to, data: commit.data, value: 0n, blockTag: 'pending' });
  } catch (error) {
    // No answer is no revert: the node's failure (rpc_failed, exit 4), not "would revert"; nor is an error answer
    // that names no revert, or one that cannot be read (as the executor's simulations).
    if (noAnswerFromNode(error) || nodeErrorNotRevert(error) || error instanceof ChainError) throw asKnownError(error);
    const reason = revertReason(error) ?? shortMessage(error);
    if (allowanceShortfall(reason)) return;
    // A revert whose answer carries no data (a node or proxy that drops the error's data field) cannot tell the
    // allowance shortfall every fresh plan meets here from a refused vote: refusing on it refused every honest vote
    // through that node, on every run. It proves nothing either way, so the plan goes on, and each call is still
    // simulated before it is signed (the commit once its approval is mined), as before this first simulation.
    if (revertData(error) === undefined) {
      warn(
        `the commit's first simulation reverted without saying why (${reason}); going on: each call is simulated again before it is signed`,
      );
      return;
    }
    throw new ChainError('call_would_revert', `plan call 1 (${commit.phase}) would revert: ${reason}; nothing was signed`, {
      hint: 'nothing was signed or sent for this vote (not even its approval); check `loopsign rate status` and balances, then run the command again',
      cause: error,
    });
  }
}

/** The operation a vote in a later round takes (--new-round), after the vote recorded as `previous`. */
function nextVote(chain: ChainConfig, wallet: string, contentId: string, previous: string): string {
  return operationId('rate', [chain.chainId, wallet, contentId, 'after', previous]);
}

/**
 * The operation the policy's preflight takes this vote for: `id`, unless --new-round will move it to the next one (its
 * journaled vote is of a round other than the question's current one), as the flow decides once the journal is open.
 */
async function preflightOperation(
  store: Store,
  client: PublicClient,
  chain: ChainConfig,
  wallet: string,
  opts: RateOptions,
  id: string,
): Promise<string> {
  if (!opts.newRound) return id;
  const earlier = operationsOf(store, 'rate', chain.chainId, wallet).find((o) => o.id === id)?.data.commit;
  if (!earlier) return id;
  const current = await onChainRound(client, chain, BigInt(opts.contentId));
  return earlier.roundId === current?.roundId.toString() ? id : nextVote(chain, wallet, opts.contentId, id);
}

/**
 * The operation of this wallet's latest vote on a question: the one recorded last (a later round's vote names the one
 * before it), or the id a first vote takes.
 */
export function latestVote(store: Store, chainId: number, wallet: string, contentId: string): string {
  const votes = operationsOf(store, 'rate', chainId, wallet).filter((o) => o.data.contentId === contentId && !o.id.includes('~'));
  return votes.at(-1)?.id ?? operationId('rate', [chainId, wallet, contentId]);
}

/** A rating journal's spend ledger: each round's stage may pay at most the stake these flags ask for. */
export function rateLedger(journal: Operation<Kind>, chain: ChainConfig, wallet: Hex, stake: bigint, policy?: PolicyGate): SpendLedger {
  return new SpendLedger(
    journal,
    chain,
    wallet,
    {
      stage: (stage) => (stage.startsWith('rate:') ? { LREP: stake } : {}),
      source: 'the --stake flag',
    },
    policy,
  );
}

/** Whether a signed transaction carries the commit (staked or advisory) with this commit hash. */
function carriesCommit(raw: Hex, wallet: Hex, hash: Hex): boolean {
  return callsOfRawTransaction(raw, wallet).some((c) => {
    for (const abi of [votingEngineAbi, advisoryRecorderAbi] as const) {
      try {
        const d = decodeFunctionData({ abi: abi as never, data: c.data }) as unknown as { functionName: string; args: readonly unknown[] };
        if (/^(commitVote|commitVoteWithPermit|recordAdvisoryVote)$/.test(d.functionName)) return sameHex(d.args[4], hash);
      } catch {
        // not this contract's call
      }
    }
    return false;
  });
}

/**
 * Refuses (exit 5) to reuse a journaled commit that is not the vote the flags ask for, naming each difference, or
 * whose commit hash its own journaled fields do not give (an edited journal would commit a vote it cannot reveal).
 */
function checkResumedVote(
  existing: BuiltCommitRecord,
  input: ReturnType<typeof parseRateInputs>,
  opts: RateOptions,
  voter: Hex,
  contentId: bigint,
): void {
  const recomputed = commitHash({
    isUp: existing.secret.isUp,
    predictedUpBps: existing.secret.predictedUpBps,
    salt: existing.secret.salt,
    voter,
    contentId,
    roundId: BigInt(existing.roundId),
    roundReferenceRatingBps: existing.roundReferenceRatingBps,
    targetRound: BigInt(existing.targetRound),
    drandChainHash: existing.drandChainHash,
    ciphertext: existing.ciphertext,
  });
  if (!sameHex(recomputed, existing.commitHash)) {
    throw new RefusedError(
      'journal_inconsistent',
      `refused: the journaled vote's commit hash is not the hash of its own direction, prediction, salt and ciphertext (the journal was edited); nothing was signed`,
      {
        hint: 'restore the journal from a backup, or vote in a later round',
        details: { rule: 'journal_inconsistent' },
      },
    );
  }
  const diffs: string[] = [];
  if (existing.secret.isUp !== opts.isUp)
    diffs.push(`direction ${existing.secret.isUp ? 'up' : 'down'} (flags: ${opts.isUp ? 'up' : 'down'})`);
  if (existing.secret.predictedUpBps !== input.bps)
    diffs.push(`prediction ${existing.secret.predictedUpBps / 100}% (flags: ${input.bps / 100}%)`);
  if (existing.stakeWei !== input.stake.toString())
    diffs.push(`stake ${Number(existing.stakeWei) / 1e6} LREP (flags: ${Number(input.stake) / 1e6} LREP)`);
  const frontend = (opts.frontend ?? '0x0000000000000000000000000000000000000000').toLowerCase();
  if (!sameAddress(existing.frontend, frontend)) diffs.push(`frontend ${existing.frontend} (flags: ${frontend})`);
  try {
    checkStakeBounds(BigInt(existing.stakeWei));
  } catch {
    diffs.push(`a stake of ${Number(existing.stakeWei) / 1e6} LREP, outside 1 … 10 LREP`);
  }
  if (diffs.length === 0) return;
  throw new RefusedError(
    'vote_mismatch',
    `refused: this round already has a journaled vote that differs from the flags: ${diffs.join(', ')}; nothing was signed`,
    {
      hint: 'rerun with the flags of the journaled vote to finish it (`loopsign rate status` shows it); a vote cannot be changed once it may have been sent',
      details: { rule: 'vote_mismatch' },
    },
  );
}

/** Whether a journaled commit's drand target round is still inside the window the round accepts now. */
export function targetStillValid(
  commit: BuiltCommitRecord,
  round: { startTime: number; epochDuration: number },
  chain: ChainConfig,
  now: number,
): boolean {
  const d = chain.drand;
  const epochEnd = round.startTime + (Math.floor(Math.max(0, now - round.startTime) / round.epochDuration) + 1) * round.epochDuration;
  const [lo, hi] = targetRoundWindow(epochEnd, d.genesis, d.period);
  const target = Number(commit.targetRound);
  return target >= lo && target <= hi;
}

interface RunFacts {
  contentId: string;
  hashes: Hex[];
  transactions: number;
  gated: boolean;
  gatedContext: GatedItem[];
  terms?: TermsRecord;
  operation: string;
  resumed: boolean;
}

/** What `rate` reports: the vote committed (or found committed), its reveal time and what was read of gated content. */
export type RateOutcome = {
  contentId: string;
  roundId: string;
  commitHash: Hex;
  commitKey: Hex;
  targetRound: string;
  revealableAt: string;
  stakeWei: string;
  advisory: boolean;
  gated: boolean;
  gatedContext: GatedItem[];
  terms?: TermsRecord;
  transactionHashes: Hex[];
  transactions: number;
  resumed: boolean;
  operation: string;
};

function rateOutcome(chain: ChainConfig, commit: BuiltCommit, run: RunFacts): RateOutcome {
  const d = chain.drand;
  return {
    contentId: run.contentId,
    roundId: commit.roundId,
    commitHash: commit.commitHash,
    commitKey: commit.secret.commitKey,
    targetRound: commit.targetRound,
    revealableAt: new Date((roundTime(Number(commit.targetRound), d.genesis, d.period) + d.period) * 1000).toISOString(),
    stakeWei: commit.stakeWei,
    advisory: commit.stakeWei === '0',
    gated: run.gated,
    gatedContext: run.gatedContext,
    ...(run.terms ? { terms: run.terms } : {}),
    transactionHashes: run.hashes,
    transactions: run.transactions,
    resumed: run.resumed,
    operation: run.operation,
  };
}

function prepareRating(ctx: Context, mcp: McpClient, args: ToolArgs, commit: BuiltCommit): Promise<ServiceDoc> {
  ctx.out.progress('rate.prepare', 'asking the service for the rating plan (only the encrypted commit is sent)');
  return mcp.call('rateloop_prepare_rating_transactions', {
    ...args,
    roundId: commit.roundId,
    roundReferenceRatingBps: commit.roundReferenceRatingBps,
    targetRound: commit.targetRound,
    drandChainHash: commit.drandChainHash,
    commitHash: commit.commitHash,
    ciphertext: commit.ciphertext,
    stakeWei: commit.stakeWei,
    frontend: commit.frontend,
  });
}
