// The whole paid round in one call, as named steps: prepare (the file checked, the signer opening), open the
// operation's journal, submit (plan, checks, payment, confirmation, proof: src/ask/submit.ts), the feedback bonus
// (src/ask/bonus.ts), the result if asked to wait. Each step is journaled; running the same ask again resumes where it
// stopped and never re-sends a mined call or pays twice: every signature is admitted by the operation's spend ledger
// (caps from the file, src/ask/caps.ts), a submission is believed only from this wallet's own receipts
// (src/ask/proof.ts), and the identifiers loopsign reports or puts in `next` are only ones it checked. A dry run is
// its own function: it pays nothing and journals nothing.
import type { Hex } from 'viem';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { Operation, operationId } from '../store/operation.js';
import { SpendLedger } from '../store/ledger.js';
import { checkSameChain, setAsideIfStale } from '../store/chain-identity.js';
import { latestCount } from '../store/nonce-mark.js';
import {
  AskFieldError,
  defaultPaymentMode,
  normalizeAsk,
  profileOf,
  type NormalizedAsk,
  type PaymentMode,
} from '../protocol/ask-normalize.js';
import type { ServiceClient } from '../service/client.js';
import type { ServiceDoc } from '../service/doc.js';
import type { GuardContext } from '../wallet/plan-guard.js';
import type { Wallet } from '../wallet/signers/types.js';
import { isExternal } from '../wallet/signers/types.js';
import type { ResolvedChain } from '../chains/index.js';
import { askUsageError } from './ask-body.js';
import { askSpendCaps } from './caps.js';
import { askGuardContext, templateResolverFrom } from './check-plan.js';
import { askFolder, askLabel, loadAsk, outgoingBody, paidRound, refuseDelegationIfUnsupported, type AskSource } from './prepare.js';
import { fundBonus, oneShotBonus, type BonusOutcome } from './bonus.js';
import { submitAsk } from './submit.js';
import type { Run } from './run.js';
import { waitForReady } from './wait.js';
import { budgetPullsOf, type BudgetPull } from '../budget/grants.js';

export type { BonusOutcome } from './bonus.js';

/** One ask run: the ask (a file, or inline: src/ask/prepare.ts) and how to run it. */
export type AskOptions = AskSource & AskRunOptions;

export interface AskRunOptions {
  paymentMode?: PaymentMode;
  confirm: boolean;
  wait: boolean;
  timeoutSeconds: number;
  atomic: boolean;
  detailsFile?: string;
  /** Set aside a journal of this ask written on another instance of the chain (a restarted sandbox) and start over. */
  setAsideStale?: boolean;
  /** Wait in place while a slot's fate is not final (issue 35), instead of stopping with exit 4. */
  waitFinal?: boolean;
  /** Confirm the wallet's transactions that loopsign's database does not know (src/store/nonce-mark.ts). */
  acceptForeignNonces?: boolean;
}

export interface AskOutcome {
  operationKey: string;
  clientRequestId: string;
  paymentMode: PaymentMode;
  status: string;
  contentIds: string[];
  transactionHashes: string[];
  /** The ask's transactions on chain, over every run of it. */
  transactions: number;
  /** What the ask pulled from the owner's on-chain grant (issue 38; none without an imported grant). */
  budgetPulls: BudgetPull[];
  /** Of those, the ones this run signed and sent (0 for a rerun of a finished ask). */
  sentThisRun: number;
  feedbackBonus: BonusOutcome | null;
  /** With wait: the settled result, as the service gave it (rater text is untrusted). */
  result: ServiceDoc | null;
  resumed: boolean;
  /** The operation's id in loopsign's database (`loopsign history --operation ID` shows its journal). */
  operation: string;
  next: string[];
}

/** What every run of an ask starts from: the checked file, the chain, the service, the opening signer. */
interface Prepared {
  settings: ResolvedChain;
  service: ServiceClient;
  signer: Wallet;
  wallet: Hex;
  mode: PaymentMode;
  body: Record<string, unknown>;
  ask: NormalizedAsk;
}

/** The file (or inline ask) checked, images uploaded, the signer opening, the body the service will get. */
async function prepareAsk(
  ctx: Context,
  opts: AskSource & { paymentMode?: PaymentMode; detailsFile?: string; atomic?: boolean },
): Promise<Prepared> {
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
  const mode: PaymentMode = opts.paymentMode ?? loaded.ask.paymentMode ?? defaultPaymentMode(loaded.ask);
  if (JSON.stringify(loaded.body).includes('"imageFiles"')) {
    const { resolveImageFiles } = await import('../images/upload.js');
    loaded.body = await resolveImageFiles(ctx, loaded.body, askLabel(opts), askFolder(opts));
  }
  const body = outgoingBody(loaded, signer.address, mode);
  let ask: NormalizedAsk;
  try {
    ask = normalizeAsk(body, { profile: profileOf(loaded.ask) });
  } catch (error) {
    if (error instanceof AskFieldError) throw askUsageError(error, askLabel(opts));
    throw error;
  }
  return { settings, service, signer, wallet: signer.address.toLowerCase() as Hex, mode, body, ask };
}

/** A dry run: the service's answer to the ask with dryRun set; no payment, no transaction, no journal. */
export async function dryRunAsk(ctx: Context, opts: AskSource & { paymentMode?: PaymentMode; detailsFile?: string }): Promise<ServiceDoc> {
  const p = await prepareAsk(ctx, opts);
  await p.signer.account; // as any ask: a wallet that does not unlock is refused first
  ctx.out.progress('ask.dry_run', 'asking for a dry run: no payment, no transaction');
  return p.service.ask({ ...p.body, dryRun: true });
}

/**
 * The operation's journal, claimed for this run: the policy's preflight first, a record of another chain instance
 * set aside when asked, the chain instance checked, and a changed request under a clientRequestId that already
 * signed something refused.
 */
async function openAsk(ctx: Context, p: Prepared, opts: AskRunOptions & AskSource): Promise<{ run: Run; resumed: boolean }> {
  const chain = p.settings.chain;
  const id = operationId('ask', [chain.chainId, p.wallet, p.ask.clientRequestId]);
  // The user's spending policy, before anything is asked for: chains, categories, amounts, windows, approval.
  const policy = await ctx.policy();
  await policy.preflightAsk(chain, p.ask, id);
  const { client } = await ctx.chain();
  const store = await ctx.store();
  if (opts.setAsideStale) {
    const aside = await setAsideIfStale(store, client, id, chain);
    if (aside)
      ctx.out.warn(
        `the journal of this ask belonged to another instance of chain ${chain.chainId}; it is kept as ${aside} and the ask starts afresh`,
      );
  }
  const journal = await Operation.open(store, 'ask', id, {
    chainId: chain.chainId,
    wallet: p.wallet,
    data: { clientRequestId: p.ask.clientRequestId, request: p.body },
  });
  try {
    const resumed = !journal.fresh;
    if (resumed) ctx.out.progress('ask.resume', `resuming from the journal (last step: ${journal.step})`);
    await checkSameChain(client, journal, '--set-aside-stale');
    // Read now, used before the first signature (src/ask/run.ts): it overlaps the service's answers, and a count read
    // before the database is read is the order the check needs. A failure counts only if something is to be signed.
    const walletCount = latestCount(client, p.wallet);
    walletCount.catch(() => undefined);
    // A changed file under the same clientRequestId is refused once anything was signed; the payment mode is a flag
    // of the run, and what a switch could pay twice is the spend ledger's to stop.
    const asked = (b: unknown) => JSON.stringify({ ...(b as Record<string, unknown>), paymentMode: undefined });
    if (
      journal.data.request &&
      asked(journal.data.request) !== asked(p.body) &&
      (journal.txs().length > 0 || journal.authorizations().length > 0)
    ) {
      throw new UsageError(
        'journal_conflict',
        `the journal for clientRequestId ${p.ask.clientRequestId} holds a different request that already sent transactions`,
        {
          hint: `use a new clientRequestId, or restore the original file; operation: ${journal.id}`,
        },
      );
    }
    await journal.save({ request: p.body });
    ctx.out.progress('ask.templates', 'reading templates to recompute result-spec hashes');
    const resolver = templateResolverFrom((await p.service.templates()).templates);
    const run: Run = {
      ctx,
      chain,
      client,
      service: p.service,
      wallet: p.wallet,
      account: p.signer.account,
      journal,
      ledger: new SpendLedger(journal, chain, p.wallet, askSpendCaps(p.ask, askLabel(opts), p.mode), policy),
      ask: p.ask,
      body: p.body,
      mode: p.mode,
      maxFeePerGas: p.settings.maxFeePerGas.value,
      atomic: opts.atomic,
      waitFinal: opts.waitFinal === true,
      cannotDelegate: p.signer.capabilities.authorization ? undefined : (p.signer.capabilities.authorizationReason ?? 'not supported'),
      guard: (metadataBase?: string): GuardContext => askGuardContext(chain, p.wallet, p.ask, resolver, metadataBase),
      walletCount,
      acceptForeignNonces: opts.acceptForeignNonces === true,
    };
    return { run, resumed };
  } catch (error) {
    await journal.close();
    throw error;
  }
}

export async function runAsk(ctx: Context, opts: AskOptions): Promise<AskOutcome> {
  const prepared = await prepareAsk(ctx, opts);
  const { run, resumed } = await openAsk(ctx, prepared, opts);
  const { journal, ask, mode, service } = run;
  // What earlier runs journaled: the report counts the rest as sent by this one.
  const earlier = new Set(journal.txs().map((t) => t.hash.toLowerCase()));
  const minedAsk = () => journal.txsFor('ask').filter((t) => t.status === 'mined');
  const counts = () => {
    const mined = minedAsk();
    return {
      transactions: mined.length,
      sentThisRun: mined.filter((t) => !earlier.has(t.hash.toLowerCase())).length,
      budgetPulls: budgetPullsOf(journal.txs(), run.wallet),
    };
  };
  try {
    const submitted = await submitAsk(run, { confirm: opts.confirm });
    // The mode the ask was paid in (journaled when planned): a finished ask rerun with the other flag pays nothing
    // more, and must not be reported as paid the other way.
    const paymentMode = journal.data.paymentMode ?? mode;
    const base = { clientRequestId: ask.clientRequestId, paymentMode, resumed, operation: journal.id };
    if (submitted.state === 'executed_not_confirmed') {
      const { operationKey, hashes } = submitted;
      return {
        ...base,
        operationKey,
        status: 'executed_not_confirmed',
        contentIds: [],
        transactionHashes: hashes,
        ...counts(),
        feedbackBonus: null,
        result: null,
        next: [`loopsign confirm --operation-key ${operationKey}`],
      };
    }
    const { operationKey, confirmed, guard, proof } = submitted;
    ctx.out.progress(
      'ask.proven',
      `the submission is on chain (question ${proof.contentIds.join(', ')}, transaction ${proof.transactionHash})`,
    );
    const transactionHashes = [...new Set([...minedAsk().map((t) => t.hash), proof.transactionHash])];

    // The bonus goes the way the ask was paid (journaled), whatever --payment-mode this run was given: a rerun that
    // omits the flag must find the bonus an earlier run funded, not look for it in the other mode's receipts.
    let feedbackBonus: BonusOutcome | null = null;
    if (ask.feedbackBonus && paymentMode === 'wallet_calls') feedbackBonus = await fundBonus(run, guard, operationKey, confirmed, proof);
    else if (ask.feedbackBonus)
      feedbackBonus = oneShotBonus(run.chain, run.wallet, proof, await run.client.getTransactionReceipt({ hash: proof.transactionHash }));

    let result: ServiceDoc | null = null;
    if (opts.wait) {
      await waitForReady(service, operationKey, ctx.out, { timeoutSeconds: opts.timeoutSeconds, signal: ctx.signal });
      result = await service.result(operationKey, proof.contentIds.length > 1 ? proof.contentIds[0] : undefined);
    }
    await journal.setStep('done');
    return {
      ...base,
      operationKey,
      status: 'submitted',
      contentIds: proof.contentIds,
      transactionHashes,
      ...counts(),
      feedbackBonus,
      result,
      next: result ? [] : [`loopsign status --operation-key ${operationKey} --wait`, `loopsign result --operation-key ${operationKey}`],
    };
  } finally {
    await journal.close();
  }
}
