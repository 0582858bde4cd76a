// The whole paid round in one call: ask, check, sign, execute, confirm, fund and confirm a feedback bonus,
// and optionally wait for the result. Each step is journaled; running the same ask again resumes where it
// stopped and never re-sends a mined call or pays twice: every signature is admitted by the operation's spend
// ledger (caps from the file, src/ask/caps.ts), a submission is believed only from this wallet's own receipts
// (src/ask/proof.ts), and the identifiers loopsign reports or puts in `next` are only ones it checked.
import { erc20Abi, formatUnits, type Hex, type LocalAccount, type Log, type PublicClient } from 'viem';
import type { Context } from '../context.js';
import { ChainError, RefusedError, ServiceError, UsageError } from '../errors.js';
import { sameAddress, sameHex } from '../hex.js';
import type { ChainConfig } from '../chains/table.js';
import { Operation, operationId } from '../store/operation.js';
import { isLive, type TxRecord } from '../store/records.js';
import { authorizationUsed, SpendLedger } from '../store/ledger.js';
import { checkSameChain, setAsideIfStale } from '../store/chain-identity.js';
import { AskFieldError, defaultPaymentMode, normalizeAsk, profileOf, type NormalizedAsk, type PaymentMode } from '../protocol/ask-normalize.js';
import type { Json, ServiceClient } from '../service/client.js';
import { callDigest, Executor, type ExecutionMode } from '../wallet/executor.js';
import { callsOfRawTransaction } from '../wallet/spend-effects.js';
import { checkAskEnvelope, checkBonusPlan, checkWalletPlan, checkX402Plan, checkX402Request, refuse, type BonusTarget, type GuardContext, type PlanCall, type X402Message } from '../wallet/plan-guard.js';
import { askSpendCaps } from './caps.js';
import { askGuardContext, publicMetadataBase, templateResolverFrom } from './check-plan.js';
import { askFolder, askLabel, loadAsk, outgoingBody, paidRound, refuseDelegationIfUnsupported, type AskSource } from './prepare.js';
import { isExternal } from '../wallet/signers/types.js';
import { bonusChainFacts, candidateTransactions, proveSubmission, type SubmissionProof } from './proof.js';
import { waitForReady } from './wait.js';
import { bonusPoolsCreated } from '../protocol/submission.js';

/** One ask run: the ask (a file, or inline: src/ask/prepare.ts) and how to run it. */
export type AskOptions = AskSource & AskRunOptions;

export interface AskRunOptions {
  paymentMode?: PaymentMode;
  dryRun: boolean;
  confirm: boolean;
  wait: boolean;
  timeoutSeconds: number;
  atomic: boolean;
  detailsFile?: string;
  /** Set aside a journal of this ask written on another instance of the chain (a restarted sandbox) and start over. */
  setAsideStale?: boolean;
}

export interface AskOutcome {
  operationKey: string;
  clientRequestId: string;
  paymentMode: PaymentMode;
  status: string;
  contentIds: string[];
  transactionHashes: string[];
  transactions: number;
  feedbackBonus: BonusOutcome | null;
  result: Json | null;
  resumed: boolean;
  /** The operation's id in loopsign's database (`loopsign history --operation ID` shows its journal). */
  operation: string;
  next: string[];
}

/** Templates from the service, each result-spec hash recomputed from the template's own fields. */
async function templateResolver(service: ServiceClient) {
  const res = await service.templates();
  return templateResolverFrom(res.templates);
}

async function checkFunds(client: PublicClient, ctx: GuardContext, wallet: Hex, calls: PlanCall[], out: Context['out']): Promise<void> {
  const needs = new Map<string, bigint>();
  const add = (asset: 'USDC' | 'LREP', amount: bigint) => needs.set(asset, (needs.get(asset) ?? 0n) + amount);
  add(ctx.ask.bounty.asset, ctx.ask.bounty.amount);
  if (ctx.ask.feedbackBonus) add(ctx.ask.feedbackBonus.asset, ctx.ask.feedbackBonus.amount);
  const missing: string[] = [];
  for (const [asset, amount] of needs) {
    const token = ctx.chain.tokens[asset as 'USDC' | 'LREP'].address as Hex;
    const balance = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
    if (balance < amount) missing.push(`${formatUnits(amount - balance, 6)} ${asset} (has ${formatUnits(balance, 6)}, needs ${formatUnits(amount, 6)})`);
  }
  const fees = await client.estimateFeesPerGas();
  const gasNeeded = BigInt(calls.length + 2) * 600_000n * (fees.maxFeePerGas ?? 0n);
  const eth = await client.getBalance({ address: wallet });
  if (eth < gasNeeded) missing.push(`about ${formatUnits(gasNeeded - eth, 18)} ETH for gas (has ${formatUnits(eth, 18)})`);
  if (missing.length) {
    throw new ChainError('insufficient_funds', `wallet ${wallet} is short of ${missing.join(' and ')}; nothing was sent`, { hint: 'fund the wallet and run the same command again' });
  }
  out.progress('ask.funds', 'balances cover the bounty, any bonus, and gas');
}

export async function runAsk(ctx: Context, opts: AskOptions): Promise<AskOutcome | Json> {
  const config = await ctx.config();
  const loaded = await loadAsk(opts, config.chainId.value, opts.detailsFile, config.profile.value, ctx.clock);
  const settings = await paidRound(ctx);
  const service = await ctx.service({ spends: true });
  // The signer opens while the service is asked and the plan checked (the keystore's key derivation, a KMS's
  // public key): only signing waits for it. The address meanwhile is the one the signer must hold, or nothing is signed.
  const signer = await ctx.wallet();
  if (opts.atomic) await refuseDelegationIfUnsupported(signer, ctx);
  // An external signer shows it holds --from before the service is asked (a KMS key's public key, a device's
  // address); only the keystore's key derivation overlaps the service call.
  if (isExternal(signer.source)) await signer.account;
  const address = signer.address;
  const wallet = address.toLowerCase() as Hex;
  const mode: PaymentMode = opts.paymentMode ?? loaded.ask.paymentMode ?? defaultPaymentMode(loaded.ask);
  if (JSON.stringify(loaded.body).includes('"imageFiles"')) {
    const { resolveImageFiles } = await import('../images/upload.js');
    loaded.body = await resolveImageFiles(ctx, loaded.body, askLabel(opts), askFolder(opts));
  }
  const body = outgoingBody(loaded, address, mode);
  let ask: NormalizedAsk;
  try {
    ask = normalizeAsk(body, { profile: profileOf(loaded.ask) });
  } catch (error) {
    if (error instanceof AskFieldError) throw new UsageError('invalid_ask', `${askLabel(opts)}: ${error.message}`, { details: { field: error.field } });
    throw error;
  }

  if (opts.dryRun) {
    await signer.account; // as any ask: a wallet that does not unlock is refused first
    ctx.out.progress('ask.dry_run', 'asking for a dry run: no payment, no transaction');
    return service.ask({ ...body, dryRun: true });
  }

  const chain = settings.chain;
  // The user's spending policy, before anything is asked for: chains, categories, amounts, windows, approval.
  const id = operationId('ask', [chain.chainId, wallet, ask.clientRequestId]);
  const policy = await ctx.policy();
  await policy.preflightAsk(chain, ask, id);
  const { client } = await ctx.chain();
  const account = signer.account; // awaited before the first signature
  const store = await ctx.store();
  if (opts.setAsideStale) {
    const aside = await setAsideIfStale(store, client, id);
    if (aside) ctx.out.warn(`the journal of this ask belonged to another instance of chain ${chain.chainId}; it is kept as ${aside} and the ask starts afresh`);
  }
  const journal = await Operation.open(store, 'ask', id, { chainId: chain.chainId, wallet, data: { clientRequestId: ask.clientRequestId, request: body } });
  try {
    const resumed = !journal.fresh;
    if (resumed) ctx.out.progress('ask.resume', `resuming from the journal (last step: ${journal.step})`);
    await checkSameChain(client, journal, '--set-aside-stale');
    // A changed file under the same clientRequestId is refused once anything was signed; the payment mode is a flag
    // of the run, and what a switch could pay twice is the spend ledger's to stop.
    const asked = (b: unknown) => JSON.stringify({ ...(b as Record<string, unknown>), paymentMode: undefined });
    if (journal.data.request && asked(journal.data.request) !== asked(body) && (journal.txs().length > 0 || journal.authorizations().length > 0)) {
      throw new UsageError('journal_conflict', `the journal for clientRequestId ${ask.clientRequestId} holds a different request that already sent transactions`, {
        hint: `use a new clientRequestId, or restore the original file; operation: ${journal.id}`,
      });
    }
    await journal.save({ request: body });
    const ledger = new SpendLedger(journal, chain, wallet, askSpendCaps(ask, askLabel(opts), mode), policy);
    const run: Run = { ctx, chain, client, account, journal, ledger, maxFeePerGas: settings.maxFeePerGas.value, atomic: opts.atomic, cannotDelegate: signer.capabilities.authorization ? undefined : (signer.capabilities.authorizationReason ?? 'not supported') };

    ctx.out.progress('ask.templates', 'reading templates to recompute result-spec hashes');
    const resolver = await templateResolver(service);
    const guard = (metadataBase?: string): GuardContext => askGuardContext(chain, wallet, ask, resolver, metadataBase);

    // Already submitted (a rerun after confirm, or the service says so)? Then no plan is executed again.
    let confirmed: Json | undefined = journal.data.confirm;
    let operationKey = journal.data.operationKey;
    let g = guard(journal.data.metadataBase);
    let askHashes: string[] = journal.data.askHashes ?? [];
    let proof: SubmissionProof | undefined;

    if (!confirmed) {
      ctx.out.progress('ask.request', `asking the service (${mode})`);
      let response = await service.ask(body);
      if (response.status === 'submitted') {
        // Believed only once this wallet's own receipt proves it (below); its operationKey must be this ask's.
        operationKey = checkedOperationKey(g, response, operationKey);
        confirmed = response;
      } else {
        g = guard(publicMetadataBase(response.questionMetadataBaseUrl));
        operationKey = checkAskEnvelope(g, response);
        await journal.setStep('ask:planned', { operationKey, metadataBase: g.hashes.metadataBase, paymentMode: mode }, { operationKey });
        let calls: PlanCall[];
        let redeemed = false;
        if (mode === 'wallet_calls') {
          calls = checkWalletPlan(g, response);
        } else {
          const signed = await signX402(run, g, response);
          response = await service.ask({ ...body, paymentAuthorization: signed.payload });
          checkAskEnvelope(g, response);
          calls = checkX402Plan(g, response, signed.message, signed.signature);
          // Anyone may send the payer's authorization to the X402QuestionSubmitter (the live contract has no sender
          // check); its nonce binds this very question, so once it is used the ask is paid, whoever sent it.
          redeemed = (await authorizationUsed(client, chain, wallet, signed.message.nonce)) && journal.txsFor('ask').every((t) => !isLive(t));
        }
        ctx.out.progress('ask.checked', `the plan passed every check (${calls.length} call${calls.length === 1 ? '' : 's'})`, { operationKey });
        if (redeemed) {
          ctx.out.warn('this ask\'s x402 authorization was already redeemed on chain by a transaction this wallet did not send: it paid for this ask\'s question (its nonce binds it), so nothing is sent; the submission is proven from the chain');
          confirmed = await service.status(operationKey);
        } else {
          if (journal.txs().length === 0) await checkFunds(client, g, wallet, calls, ctx.out);
          await expireStaleReservation(client, journal, calls, ctx);
          const execMode: ExecutionMode = response.transactionPlan?.requiresAtomicExecution === true && calls.length > 1 ? 'atomic' : opts.atomic ? 'segmented' : 'ordered';
          const result = await (await executor(run)).execute('ask', calls, execMode);
          askHashes = result.hashes;
          await journal.setStep('ask:executed', { askHashes: result.hashes });
          if (!opts.confirm) {
            return outcome(journal, { operationKey, clientRequestId: ask.clientRequestId, paymentMode: mode, status: 'executed_not_confirmed', contentIds: [], transactionHashes: askHashes, transactions: result.transactions, feedbackBonus: null, result: null, resumed, next: [`loopsign confirm --operation-key ${operationKey}`] });
          }
          ctx.out.progress('ask.confirm', 'confirming the transactions with the service');
          confirmed = await service.confirm(operationKey, askHashes);
          if (confirmed.status !== 'submitted') throw new ServiceError('confirm_failed', `the service did not accept the confirmation (status ${String(confirmed.status)})`);
        }
      }
      // Proven before it is journaled: a claim the chain does not back must not stop a later honest run.
      proof = await proveSubmission(client, chain, wallet, ask, journal, candidateTransactions(journal, confirmed.transactionHashes), g.verifyPayload ? g.hashes.salts : undefined);
      await journal.setStep('ask:confirmed', { confirm: confirmed, operationKey }, { operationKey });
    }
    if (!operationKey) throw new ServiceError('missing_operation_key', 'the service did not return an operationKey');

    // The chain's word, not the service's: which questions this wallet's own transaction submitted.
    proof ??= await proveSubmission(client, chain, wallet, ask, journal, candidateTransactions(journal, confirmed.transactionHashes), g.verifyPayload ? g.hashes.salts : undefined);
    ctx.out.progress('ask.proven', `the submission is on chain (question ${proof.contentIds.join(', ')}, transaction ${proof.transactionHash})`);
    const transactionHashes = [...new Set([...journal.txsFor('ask').filter((t) => t.status === 'mined').map((t) => t.hash), proof.transactionHash])];

    let feedbackBonus: BonusOutcome | null = null;
    if (ask.feedbackBonus && mode === 'wallet_calls') {
      feedbackBonus = await fundBonus(run, service, g, operationKey, confirmed, proof);
    } else if (ask.feedbackBonus) {
      feedbackBonus = oneShotBonus(chain, wallet, proof, await client.getTransactionReceipt({ hash: proof.transactionHash }));
    }

    let result: Json | null = null;
    if (opts.wait) {
      await waitForReady(service, operationKey, ctx.out, { timeoutSeconds: opts.timeoutSeconds, signal: ctx.signal });
      result = await service.result(operationKey, proof.contentIds.length > 1 ? proof.contentIds[0] : undefined);
    }
    await journal.setStep('done');
    return outcome(journal, {
      operationKey,
      clientRequestId: ask.clientRequestId,
      paymentMode: mode,
      status: 'submitted',
      contentIds: proof.contentIds,
      transactionHashes,
      transactions: journal.txsFor('ask').filter((t) => t.status === 'mined').length,
      feedbackBonus,
      result,
      resumed,
      next: result ? [] : [`loopsign status --operation-key ${operationKey} --wait`, `loopsign result --operation-key ${operationKey}`],
    });
  } finally {
    await journal.close();
  }
}

/** What one ask run shares with its steps. */
interface Run {
  ctx: Context;
  chain: ChainConfig;
  client: PublicClient;
  /** Resolves when the keystore is unlocked. */
  account: Promise<LocalAccount>;
  journal: Operation<'ask'>;
  ledger: SpendLedger;
  maxFeePerGas: bigint;
  atomic: boolean;
  /** Why the signer cannot sign an EIP-7702 authorization, if it cannot. */
  cannotDelegate: string | undefined;
}

/** The executor, once the wallet is unlocked (the key is still being derived while the plan is asked for and checked). */
async function executor(run: Run): Promise<Executor> {
  return new Executor({ client: run.client, account: await run.account, chain: run.chain, op: run.journal, out: run.ctx.out, ledger: run.ledger, allowDelegation: run.atomic, cannotDelegate: run.cannotDelegate, maxFeePerGas: run.maxFeePerGas });
}

/**
 * The operationKey of an answer that says "submitted": it must have the exact form, equal what this ask hashes to
 * (live-shaped asks), and equal any key journaled before. Nothing else from such an answer is used unchecked.
 */
function checkedOperationKey(g: GuardContext, response: Json, journaled: Hex | undefined): Hex {
  const key = response.operationKey;
  if (typeof key !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(key)) refuse('bad_operation_key', 'operationKey is not 0x + 64 hex');
  if (g.verifyPayload && !sameHex(key, g.hashes.operationKey)) refuse('operation_key_mismatch', `operationKey ${key} is not the one this ask hashes to (${g.hashes.operationKey})`);
  if (journaled && !sameHex(key, journaled)) refuse('operation_key_mismatch', `operationKey ${key} is not the one journaled for this ask (${journaled})`);
  return key.toLowerCase() as Hex;
}

/**
 * A reservation lives 30 minutes (chain.md §6.11). When a resumed ask finds its journaled reservation older than
 * that and the submit not yet mined, the reservation is sent again: it moves no money, and the submit needs it.
 */
async function expireStaleReservation(client: PublicClient, journal: Operation<'ask'>, calls: PlanCall[], ctx: Context): Promise<void> {
  if (calls[0]?.phase !== 'reserve_submission') return;
  const carried = (t: TxRecord, call: PlanCall) => callsOfRawTransaction(t.raw, journal.wallet as Hex).some((c) => callDigest(c) === callDigest(call));
  const txs = journal.txsFor('ask');
  const reserve = txs.find((t) => t.status === 'mined' && carried(t, calls[0]!));
  const submitted = txs.some((t) => isLive(t) && carried(t, calls[calls.length - 1]!));
  if (!reserve || submitted || reserve.blockNumber === undefined) return;
  const reservedAt = (await client.getBlock({ blockNumber: BigInt(reserve.blockNumber) })).timestamp;
  const latest = (await client.getBlock({ blockTag: 'latest' })).timestamp;
  if (latest < reservedAt + 1800n - 30n) return;
  ctx.out.progress('ask.reserve_again', 'the journaled reservation has expired (30 minutes); reserving again');
  // Moved out of the ask stage, so the executor sends the reservation again (it moves no money).
  await journal.updateTx(reserve.hash, { stage: 'ask:expired-reservation' });
}

function outcome(journal: Operation<'ask'>, o: Omit<AskOutcome, 'operation'>): AskOutcome {
  return { ...o, operation: journal.id };
}

/**
 * The EIP-3009 authorization: the one already signed for this ask while it stays valid for two more minutes (same
 * nonce, so it can pay only once), else a new one — admitted by the spend ledger first, which counts every
 * authorization signed for this ask until it has provably expired unused.
 */
async function signX402(run: Run, g: GuardContext, response: Json) {
  const { client, journal, ctx } = run;
  const latest = await client.getBlock({ blockTag: 'latest' });
  const now = Math.max(Math.floor(ctx.clock.now() / 1000), Number(latest.timestamp));
  const stored = journal.authorizations().filter((a) => !a.dead).at(-1);
  if (stored && BigInt(stored.message.validBefore) > BigInt(now + 120)) {
    const m = stored.message;
    const message = { from: m.from as Hex, to: m.to as Hex, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce as Hex };
    return { message, signature: stored.signature, payload: { ...m, signature: stored.signature } };
  }
  if (response.nextAction !== 'sign_x402_authorization') refuse('x402_missing', `the service did not ask for an authorization (nextAction ${String(response.nextAction)})`);
  const typed = checkX402Request(g, response, now);
  const m: X402Message = typed.message;
  const wire = { from: m.from, to: m.to, value: m.value.toString(), validAfter: m.validAfter.toString(), validBefore: m.validBefore.toString(), nonce: m.nonce };
  // Admitted, signed and recorded in one write transaction, like a transaction: no other process (of any wallet) can
  // pass the policy's windows at the same moment, and the signature is on disk before the next request carries it.
  const account = await run.account;
  const entry = await run.ledger.admitAuthorization('ask', wire, client, () => account.signTypedData(typed as unknown as Parameters<typeof account.signTypedData>[0]));
  await journal.setStep('ask:x402_signed');
  ctx.out.progress('ask.x402', `signed a USDC ReceiveWithAuthorization of ${formatUnits(m.value, 6)} USDC to the trusted submitter, valid until ${m.validBefore}`);
  return { message: m, signature: entry.signature, payload: { ...wire, signature: entry.signature } };
}

/** The bonus as loopsign reports it: only values it checked (the pool from its own receipt). */
export interface BonusOutcome {
  status: 'funded' | 'unavailable';
  asset?: string;
  amount?: string;
  contentId?: string;
  roundId?: string;
  poolId?: string | null;
  transactionHashes?: Hex[];
  /** What the service said, when loopsign could not fund or prove it. */
  service?: Json | null;
}

/**
 * The feedback bonus of a wallet-calls ask. Checked against the file and the chain (the proven content, its open
 * round), journaled before its first transaction, and once any bonus transaction is signed only that journaled
 * plan is ever resumed and confirmed: a rerun never funds a second pool, whatever the service answers.
 */
async function fundBonus(run: Run, service: ServiceClient, g: GuardContext, operationKey: Hex, confirmed: Json, proof: SubmissionProof): Promise<BonusOutcome> {
  const { journal, ctx, client } = run;
  const contentId = proof.contentIds[0]!;
  let plan = journal.data.bonusPlan;
  if (!plan) {
    if (journal.txsFor('bonus').length > 0) throw new RefusedError('bonus_plan_missing', 'bonus transactions are journaled without their plan; refusing to fund again', { hint: `inspect operation ${journal.id} with \`loopsign history --operation ${journal.id}\`; nothing was sent` });
    let bonus: Json | undefined = confirmed.feedbackBonus;
    if (!bonus?.transactionPlan) bonus = (await service.status(operationKey)).feedbackBonus;
    if (!bonus?.transactionPlan) {
      ctx.out.warn('the service returned no feedback bonus plan (feedback_bonus_plan_unavailable); the ask itself is submitted and nothing was paid for a bonus');
      return { status: 'unavailable', service: bonus ?? null };
    }
    const facts = await bonusChainFacts(client, run.chain, contentId);
    checkBonusPlan(g, bonus, facts);
    plan = { bonus, target: { contentId: facts.contentId, roundId: facts.roundId.toString(), roundStart: facts.roundStart.toString(), now: facts.now.toString() } };
    await journal.setStep('bonus:planned', { bonusPlan: plan });
  }
  // Checked again as journaled (a rerun may come after the round moved on: the facts are those it was checked with).
  const t = plan.target;
  const target: BonusTarget = { contentId: t.contentId, roundId: BigInt(t.roundId), roundStart: BigInt(t.roundStart), now: BigInt(t.now) };
  if (target.contentId !== contentId) refuse('bonus_wrong_content', `the journaled bonus plan is for question ${target.contentId}, the proven submission is ${contentId}`);
  const calls = checkBonusPlan(g, plan.bonus, target);
  ctx.out.progress('bonus.checked', 'the feedback bonus plan passed every check');
  const mode: ExecutionMode = plan.bonus.transactionPlan.requiresAtomicExecution === true ? 'atomic' : run.atomic ? 'segmented' : 'ordered';
  const { hashes } = await (await executor(run)).execute('bonus', calls, mode);
  await journal.setStep('bonus:executed', { bonusHashes: hashes });
  ctx.out.progress('bonus.confirm', 'confirming the feedback bonus with the service');
  const res = await service.confirmBonus(operationKey, hashes);
  await journal.setStep('bonus:confirmed', { bonusConfirm: res });
  if (res.feedbackBonus?.status !== 'funded') throw new ServiceError('bonus_not_funded', `the service reports the feedback bonus as ${String(res.feedbackBonus?.status)}`);
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  const funder = (await run.account).address;
  const pool = bonusPoolsCreated(receipts.flatMap((r) => r.logs), run.chain.contracts.feedbackBonusEscrow as Hex).find((p) => String(p.contentId) === contentId && sameAddress(p.funder, funder));
  const want = g.ask.feedbackBonus!;
  return { status: 'funded', asset: want.asset, amount: want.amount.toString(), contentId, roundId: target.roundId.toString(), poolId: pool ? String(pool.poolId) : null, transactionHashes: hashes };
}

/** An x402 one-shot ask funds its bonus in the submit call: the pool is read from that receipt. */
function oneShotBonus(chain: ChainConfig, wallet: Hex, proof: SubmissionProof, receipt: { logs: readonly Log[] }): BonusOutcome {
  const pool = bonusPoolsCreated(receipt.logs, chain.contracts.feedbackBonusEscrow as Hex).find((p) => String(p.contentId) === proof.contentIds[0] && sameAddress(p.funder, wallet));
  return pool
    ? { status: 'funded', asset: 'USDC', amount: String(pool.amount), contentId: proof.contentIds[0]!, roundId: String(pool.roundId), poolId: String(pool.poolId), transactionHashes: [proof.transactionHash] }
    : { status: 'unavailable', service: null };
}
