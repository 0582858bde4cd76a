// The whole paid round in one call: ask, check, sign, execute, confirm, fund and confirm a feedback bonus,
// and optionally wait for the result. Each step is journaled; running the same ask again resumes where it
// stopped and never re-sends a mined call or pays twice.
import { erc20Abi, formatUnits, toHex, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Context } from '../context.js';
import { ChainError, ServiceError, UsageError } from '../errors.js';
import { connectChain } from '../chains/client.js';
import { Journal, journalId } from '../journal/journal.js';
import { AskFieldError, defaultPaymentMode, normalizeAsk, profileOf, type NormalizedAsk, type PaymentMode } from '../protocol/ask-normalize.js';
import type { Json, ServiceClient } from '../service/client.js';
import { Executor, type ExecutionMode } from '../wallet/executor.js';
import { checkAskEnvelope, checkBonusPlan, checkWalletPlan, checkX402Plan, checkX402Request, refuse, type GuardContext, type PlanCall, type X402Message } from '../wallet/plan-guard.js';
import { askGuardContext, publicMetadataBase, templateResolverFrom } from './check-plan.js';
import { askEnvironment, loadAskFile, outgoingBody } from './prepare.js';
import { waitForReady } from './wait.js';

export interface AskOptions {
  file: string;
  paymentMode?: PaymentMode;
  dryRun: boolean;
  confirm: boolean;
  wait: boolean;
  timeoutSeconds: number;
  atomic: boolean;
  detailsFile?: string;
}

export interface AskOutcome {
  operationKey: string;
  clientRequestId: string;
  paymentMode: PaymentMode;
  status: string;
  contentIds: string[];
  transactionHashes: string[];
  transactions: number;
  feedbackBonus: Json | null;
  result: Json | null;
  resumed: boolean;
  journal: string;
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
  const loaded = await loadAskFile(opts.file, config.chainId.value, opts.detailsFile, config.profile.value);
  const env = await askEnvironment(ctx, true);
  const wallet = env.signer.address.toLowerCase() as Hex;
  const mode: PaymentMode = opts.paymentMode ?? loaded.ask.paymentMode ?? defaultPaymentMode(loaded.ask);
  if (JSON.stringify(loaded.body).includes('"imageFiles"')) {
    const { resolveImageFiles } = await import('../images/upload.js');
    loaded.body = await resolveImageFiles(ctx, loaded.body, opts.file, env);
  }
  const body = outgoingBody(loaded, env.signer.address, mode);
  let ask: NormalizedAsk;
  try {
    ask = normalizeAsk(body, { profile: profileOf(loaded.ask) });
  } catch (error) {
    if (error instanceof AskFieldError) throw new UsageError('invalid_ask', `${opts.file}: ${error.message}`, { details: { field: error.field } });
    throw error;
  }

  if (opts.dryRun) {
    ctx.out.progress('ask.dry_run', 'asking for a dry run: no payment, no transaction');
    return env.service.ask({ ...body, dryRun: true });
  }

  const chain = env.chain.chain;
  const client = await connectChain(env.chain);
  const account = privateKeyToAccount(toHex(env.signer.privateKey));
  const id = journalId('ask', [chain.chainId, wallet, ask.clientRequestId]);
  const journal = await Journal.open(id, { kind: 'ask', chainId: chain.chainId, wallet, clientRequestId: ask.clientRequestId, request: body });
  try {
    const resumed = journal.data.txs.length > 0 || journal.data.step !== 'created';
    if (resumed) ctx.out.progress('ask.resume', `resuming from the journal (last step: ${journal.data.step})`);
    if (journal.data.request && JSON.stringify(journal.data.request) !== JSON.stringify(body) && journal.data.txs.length > 0) {
      throw new UsageError('journal_conflict', `the journal for clientRequestId ${ask.clientRequestId} holds a different request that already sent transactions`, {
        hint: `use a new clientRequestId, or restore the original file; journal: ${journal.file}`,
      });
    }
    await journal.save({ request: body });

    ctx.out.progress('ask.templates', 'reading templates to recompute result-spec hashes');
    const resolver = await templateResolver(env.service);
    const guard = (metadataBase?: string): GuardContext => askGuardContext(chain, wallet, ask, resolver, metadataBase);

    // Already submitted (a rerun after confirm, or the service says so)? Then no plan is executed again.
    let confirmed: Json | undefined = journal.data.confirm as Json | undefined;
    let operationKey = journal.data.operationKey as string | undefined;
    let g = guard(journal.data.metadataBase as string | undefined);
    let askHashes: string[] = (journal.data.askHashes as string[] | undefined) ?? [];
    let transactions = journal.data.txs.length;

    if (!confirmed) {
      ctx.out.progress('ask.request', `asking the service (${mode})`);
      let response = await env.service.ask(body);
      if (response.status === 'submitted') {
        confirmed = response;
      } else {
        g = guard(publicMetadataBase(response.questionMetadataBaseUrl));
        operationKey = checkAskEnvelope(g, response);
        await journal.step('ask:planned', { operationKey, metadataBase: g.hashes.metadataBase, paymentMode: mode });
        let calls: PlanCall[];
        if (mode === 'wallet_calls') {
          calls = checkWalletPlan(g, response);
        } else {
          const signed = await signX402(ctx, g, response, client, account, journal);
          response = await env.service.ask({ ...body, paymentAuthorization: signed.payload });
          checkAskEnvelope(g, response);
          calls = checkX402Plan(g, response, signed.message, signed.signature);
        }
        ctx.out.progress('ask.checked', `the plan passed every check (${calls.length} call${calls.length === 1 ? '' : 's'})`, { operationKey });
        if (journal.data.txs.length === 0) await checkFunds(client, g, wallet, calls, ctx.out);
        await expireStaleReservation(client, journal, calls, ctx);
        const execMode: ExecutionMode = response.transactionPlan?.requiresAtomicExecution === true && calls.length > 1 ? 'atomic' : opts.atomic ? 'segmented' : 'ordered';
        const executor = new Executor(client, account, chain, journal, ctx.out, opts.atomic);
        const result = await executor.execute('ask', calls, execMode);
        askHashes = result.hashes;
        transactions = result.transactions;
        await journal.step('ask:executed', { askHashes });
        if (!opts.confirm) {
          return outcome(journal, { operationKey: operationKey!, clientRequestId: ask.clientRequestId, paymentMode: mode, status: 'executed_not_confirmed', contentIds: [], transactionHashes: askHashes, transactions, feedbackBonus: null, result: null, resumed, next: [`loopsign confirm --operation-key ${operationKey}`] });
        }
        ctx.out.progress('ask.confirm', 'confirming the transactions with the service');
        confirmed = await env.service.confirm(operationKey!, askHashes);
        if (confirmed.status !== 'submitted') throw new ServiceError('confirm_failed', `the service did not accept the confirmation (status ${confirmed.status})`);
      }
      await journal.step('ask:confirmed', { confirm: confirmed, operationKey: confirmed.operationKey ?? operationKey });
      operationKey = (confirmed.operationKey as string | undefined) ?? operationKey;
    }

    const contentIds = (confirmed.contentIds as string[] | undefined) ?? [];
    let feedbackBonus = (confirmed.feedbackBonus as Json | undefined) ?? null;
    if (ask.feedbackBonus && mode === 'wallet_calls') {
      feedbackBonus = await fundBonus(ctx, env.service, g, operationKey!, confirmed, client, account, journal, opts.atomic);
    }
    if (!g.verifyPayload && !operationKey) throw new ServiceError('missing_operation_key', 'the service did not return an operationKey');

    let result: Json | null = null;
    if (opts.wait) {
      await waitForReady(env.service, operationKey!, ctx.out, { timeoutSeconds: opts.timeoutSeconds });
      result = await env.service.result(operationKey!, contentIds.length > 1 ? contentIds[0] : undefined);
    }
    await journal.step('done');
    return outcome(journal, {
      operationKey: operationKey!,
      clientRequestId: ask.clientRequestId,
      paymentMode: mode,
      status: 'submitted',
      contentIds,
      transactionHashes: (confirmed.transactionHashes as string[] | undefined) ?? askHashes,
      transactions,
      feedbackBonus,
      result,
      resumed,
      next: result ? [] : [`loopsign status --operation-key ${operationKey} --wait`, `loopsign result --operation-key ${operationKey}`],
    });
  } finally {
    await journal.close();
  }
}

/**
 * A reservation lives 30 minutes (chain.md §6.11). When a resumed ask finds its journaled reservation older than
 * that and the submit not yet mined, the reservation is sent again: it moves no money, and the submit needs it.
 */
async function expireStaleReservation(client: PublicClient, journal: Journal, calls: PlanCall[], ctx: Context): Promise<void> {
  if (calls[0]?.phase !== 'reserve_submission') return;
  const txs = journal.txsFor('ask');
  const reserve = txs.find((t) => t.calls[0] === 0 && t.status === 'mined');
  const submitted = txs.some((t) => t.calls.includes(calls.length - 1) && t.status !== 'reverted');
  if (!reserve || submitted || reserve.blockNumber === undefined) return;
  const reservedAt = (await client.getBlock({ blockNumber: BigInt(reserve.blockNumber) })).timestamp;
  const latest = (await client.getBlock({ blockTag: 'latest' })).timestamp;
  if (latest < reservedAt + 1800n - 30n) return;
  ctx.out.progress('ask.reserve_again', 'the journaled reservation has expired (30 minutes); reserving again');
  reserve.stage = 'ask:expired-reservation';
  await journal.save();
}

function outcome(journal: Journal, o: Omit<AskOutcome, 'journal'>): AskOutcome {
  return { ...o, journal: journal.file };
}

async function signX402(ctx: Context, g: GuardContext, response: Json, client: PublicClient, account: ReturnType<typeof privateKeyToAccount>, journal: Journal) {
  const latest = await client.getBlock({ blockTag: 'latest' });
  const now = Math.max(Math.floor(Date.now() / 1000), Number(latest.timestamp));
  const stored = journal.data.x402 as { message: Record<string, string>; signature: Hex } | undefined;
  if (stored && BigInt(stored.message.validBefore!) > BigInt(now + 120)) {
    // Resume: the same authorization again (same nonce), never a second one for the same ask.
    const message = { from: stored.message.from as Hex, to: stored.message.to as Hex, value: BigInt(stored.message.value!), validAfter: BigInt(stored.message.validAfter!), validBefore: BigInt(stored.message.validBefore!), nonce: stored.message.nonce as Hex };
    return { message, signature: stored.signature, payload: { ...stored.message, signature: stored.signature } };
  }
  if (response.nextAction !== 'sign_x402_authorization') refuse('x402_missing', `the service did not ask for an authorization (nextAction ${response.nextAction})`);
  const typed = checkX402Request(g, response, now);
  const signature = await account.signTypedData(typed as unknown as Parameters<typeof account.signTypedData>[0]);
  const m: X402Message = typed.message;
  const wire = { from: m.from, to: m.to, value: m.value.toString(), validAfter: m.validAfter.toString(), validBefore: m.validBefore.toString(), nonce: m.nonce };
  await journal.step('ask:x402_signed', { x402: { message: wire, signature } });
  ctx.out.progress('ask.x402', `signed a USDC ReceiveWithAuthorization of ${formatUnits(m.value, 6)} USDC to the trusted submitter, valid until ${m.validBefore}`);
  return { message: m, signature, payload: { ...wire, signature } };
}

async function fundBonus(
  ctx: Context,
  service: ServiceClient,
  g: GuardContext,
  operationKey: string,
  confirmed: Json,
  client: PublicClient,
  account: ReturnType<typeof privateKeyToAccount>,
  journal: Journal,
  atomic: boolean,
): Promise<Json | null> {
  let bonus = (journal.data.bonusConfirm as Json | undefined)?.feedbackBonus ?? confirmed.feedbackBonus;
  if (bonus?.status === 'funded') return bonus;
  if (!bonus || bonus.status !== 'awaiting_wallet_signature' || !bonus.transactionPlan) {
    // The plan may be missing from a stored confirm body: ask for the current state.
    const status = await service.status(operationKey);
    bonus = status.feedbackBonus;
    if (bonus?.status === 'funded') return bonus;
    if (!bonus?.transactionPlan) {
      ctx.out.warn('the service returned no feedback bonus plan (feedback_bonus_plan_unavailable); the ask itself is submitted');
      return bonus ?? null;
    }
  }
  const contentId = String((confirmed.contentIds as string[])[0]);
  const calls = checkBonusPlan(g, bonus, contentId);
  ctx.out.progress('bonus.checked', 'the feedback bonus plan passed every check');
  const mode: ExecutionMode = bonus.transactionPlan.requiresAtomicExecution === true ? 'atomic' : atomic ? 'segmented' : 'ordered';
  const executor = new Executor(client, account, g.chain, journal, ctx.out, atomic);
  const { hashes } = await executor.execute('bonus', calls, mode);
  await journal.step('bonus:executed', { bonusHashes: hashes });
  ctx.out.progress('bonus.confirm', 'confirming the feedback bonus with the service');
  const res = await service.confirmBonus(operationKey, hashes);
  await journal.step('bonus:confirmed', { bonusConfirm: res });
  if (res.feedbackBonus?.status !== 'funded') throw new ServiceError('bonus_not_funded', `the service reports the feedback bonus as ${res.feedbackBonus?.status}`);
  return res.feedbackBonus;
}

