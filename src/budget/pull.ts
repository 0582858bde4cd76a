// The agent's side of a grant inside an ask (issue 38): once this wallet (S) imported a grant, a stage that pays
// (the ask, the bonus) first pulls what it will spend and S's free balance does not cover, from the owner O through
// MetaMask's DelegationManager, under the wallet's claim so no other loopsign process spends it in between.
//
//   needed   what the stage pays of USDC, from the user's file alone (src/ask/caps.ts: the bounty, the bonus); a stage
//            that pays LREP pulls LREP instead, from the grant's LREP delegation (`--lrep-per-day`), if it has one
//   free     S's USDC balance less what other asks of S pulled and have not paid yet (their journals say so)
//   pull     max(0, needed − free), refused before anything is signed when the chain's enforcers say the grant's day
//            or 30-day period has less left (budget_exhausted), or the grant is revoked, expired or unusable
//
// Ordered plans and x402: the pull is its own journaled transaction (stage `<stage>_pull`), mined before the plan
// (or the authorization). Batched plans (--atomic, requiresAtomicExecution): the pull is a call of the same EIP-7702
// batch as the payment, so a batch that fails undoes the pull. A rerun finds the pull in the journal and reuses its
// very call (found on chain, or its bytes sent again): one ask never pulls twice. The pull moves O's money to S and is
// no spending of S (src/wallet/spend-effects.ts); the ask's payment is what the ledger and the policy count.
import { erc20Abi, formatUnits, isAddressEqual, type Hex } from 'viem';
import { decodeDelegations } from '@metamask/delegation-core';
import { ChainError, RefusedError } from '../errors.js';
import type { Address } from '../chains/table.js';
import { checkDelegationCode, delegationAnchors, type DelegationAnchors } from '../chains/delegation.js';
import { readOperation } from '../store/operation.js';
import { isLive, type TxRecord } from '../store/records.js';
import { ownReceipt } from '../wallet/finality.js';
import type { Amounts } from '../store/ledger.js';
import { callEffects, callsOfRawTransaction } from '../wallet/spend-effects.js';
import type { ExecutionMode, ExecutionResult, Executor } from '../wallet/executor.js';
import type { PlanCall } from '../wallet/plan-guard.js';
import { askSpendCaps } from '../ask/caps.js';
import type { Run } from '../ask/run.js';
import { delegationHash, delegationSigner, pullCalldata } from './delegation.js';
import { decodeGrantCaveats, GrantShapeError } from './terms.js';
import { delegationOf, grantEntry, type GrantAsset, type GrantFile } from './grant-file.js';
import { pullStage, sessionGrants, type PayingStage } from './grants.js';
import { decodePullCall } from './pull-call.js';
import { readGrantState, type GrantState } from './show.js';
import { delegatedTo } from './grant.js';

const PHASE = 'budget_pull';

/** The pull call journaled for this stage (its own transaction, or a call of a batch), if a live transaction carries one. */
function journaledPull(run: Run, stage: PayingStage): { call: PlanCall; own: boolean } | undefined {
  for (const [s, own] of [
    [pullStage(stage), true],
    [stage, false],
  ] as const) {
    for (const tx of run.journal.txsFor(s).filter(isLive)) {
      const call = callsOfRawTransaction(tx.raw, run.wallet).find((c) => decodePullCall(c.data) !== undefined);
      if (call) return { call: { phase: PHASE, to: call.to, data: call.data, value: '0' }, own };
    }
  }
  return undefined;
}

const STEPS_PAST = {
  ask: ['ask:executed', 'ask:confirmed', 'bonus:planned', 'bonus:executed', 'bonus:confirmed', 'done'],
  bonus: ['bonus:executed', 'bonus:confirmed', 'done'],
} as const;

/**
 * What other asks of this wallet pulled and have not paid yet (a run killed between its pull and its payment): that
 * money in S's balance is theirs, and their reruns reuse their pull instead of pulling again. Read under the wallet's
 * claim, so no other loopsign process is between a pull and its payment meanwhile, and after S's balance: a pull
 * journaled `signed` may be on chain already (a run killed after its broadcast, before the receipt was recorded), so
 * the chain is asked; one mined after the balance was read is counted too, which only keeps more aside.
 */
async function pulledNotPaid(run: Run, token: Hex): Promise<bigint> {
  let total = 0n;
  // Only the asks of this wallet and chain with a pull of their own mined or signed are read (not every ask it ever
  // made).
  const ids = run.journal.store.read(
    (db) =>
      db
        .prepare(
          `SELECT DISTINCT o.id AS id FROM operations o JOIN transactions t ON t.operation_id = o.id
             WHERE o.kind = 'ask' AND o.chain_id = ? AND o.wallet = ? AND t.stage IN (?, ?) AND t.status IN ('mined', 'signed')`,
        )
        .all(run.chain.chainId, run.wallet.toLowerCase(), pullStage('ask'), pullStage('bonus')) as { id: string }[],
  );
  for (const { id } of ids) {
    const op = readOperation(run.journal.store, 'ask', id);
    if (!op || op.id === run.journal.id || op.id.includes('~') || op.chainGenesis !== run.journal.chainGenesis) continue;
    for (const stage of ['ask', 'bonus'] as const) {
      let pulled = 0n;
      for (const t of op.txs.filter((t) => t.stage === pullStage(stage) && (t.status === 'mined' || t.status === 'signed'))) {
        const amount = callsOfRawTransaction(t.raw, run.wallet as Hex)
          .map((c) => decodePullCall(c.data))
          .filter((p) => p !== undefined && isAddressEqual(p.token, token))
          .reduce((sum, p) => sum + p!.amount, 0n);
        if (amount === 0n) continue;
        if (t.status === 'signed' && !(await minedOnChain(run, t))) continue;
        pulled += amount;
      }
      if (pulled === 0n) continue;
      const paid =
        (STEPS_PAST[stage] as readonly string[]).includes(op.step) ||
        op.txs.some(
          (t) =>
            t.stage === stage &&
            t.status === 'mined' &&
            callsOfRawTransaction(t.raw, run.wallet as Hex).some((c) => callEffects(run.chain, c).some((e) => e.kind === 'pull')),
        );
      if (!paid) total += pulled;
    }
  }
  return total;
}

/** Whether a transaction journaled `signed` (or a fee bump of it, the same calls) succeeded on chain. */
async function minedOnChain(run: Run, t: TxRecord): Promise<boolean> {
  for (const hash of [t.hash, ...(t.versions ?? []).filter((v) => v.kind === 'bump').map((v) => v.hash)]) {
    if ((await ownReceipt(run.client, hash))?.status === 'success') return true;
  }
  return false;
}

/** Display amounts of the state's asset (USDC and LREP both have 6 decimals). */
const shown = (state: { asset?: GrantAsset }) => (atomic: bigint | string) => `${formatUnits(BigInt(atomic), 6)} ${state.asset ?? 'USDC'}`;

/** Refuses (before anything is signed) what the grant's state says cannot be pulled now. */
function refuseUnusable(state: GrantState, want: bigint): void {
  const retry = { hint: 'ask the owner for a new grant (`loopsign budget grant`), then `loopsign budget import` it' };
  if (state.status === 'revoked_disabled' || state.status === 'revoked_nonce')
    throw new RefusedError(
      'budget_revoked',
      `the owner revoked grant ${state.grant} (${state.status === 'revoked_nonce' ? 'nonce moved on' : 'disabled'}); nothing was signed or paid`,
      { ...retry, details: { grant: state.grant } },
    );
  if (state.status === 'expired')
    throw new RefusedError('budget_expired', `grant ${state.grant} expired at ${state.expiresAtIso}; nothing was signed or paid`, {
      ...retry,
      details: { grant: state.grant, expiresAt: state.expiresAt },
    });
  if (state.status === 'paused')
    throw new ChainError(
      'budget_unavailable',
      'the DelegationManager is paused: the grant cannot be redeemed now; nothing was signed or paid',
      {
        hint: 'run the ask again later',
        details: { grant: state.grant },
      },
    );
  // The tightest window decides; when both are short, the later reset is the first time the pull can pass.
  const short = state.windows.filter((w) => BigInt(w.available) < want);
  if (short.length === 0) return;
  const binding = short.reduce((a, b) => (b.resetsAt > a.resetsAt ? b : a));
  const never = state.windows.some((w) => BigInt(w.cap) < want);
  const retryAfterSeconds = Math.max(0, binding.resetsAt - state.chainTime);
  const amount = shown(state);
  throw new RefusedError(
    'budget_exhausted',
    `this ask would pull ${amount(want)} from the owner's grant, which has ${short.map((w) => `${amount(w.available)} of ${amount(w.cap)} left this ${w.window === 'day' ? 'UTC day' : '30-day period'}`).join(' and ')}; ${never ? 'the grant never allows that much at once' : `it resets at ${binding.resetsAtIso} (in ${retryAfterSeconds} s)`}; nothing was signed or paid`,
    {
      hint: never
        ? 'ask for less, or ask the owner for a larger grant'
        : `run the same ask again after ${binding.resetsAtIso}, or ask the owner for a larger grant`,
      details: {
        grant: state.grant,
        asset: state.asset,
        needed: want.toString(),
        window: binding.window,
        available: binding.available,
        cap: binding.cap,
        resetsAt: binding.resetsAt,
        resetsAtIso: binding.resetsAtIso,
        retryAfterSeconds,
      },
    },
  );
}

/** A recorded grant still is what `budget import` accepted: its caveats, its hash, its owner's signature. */
async function checkRecordedGrant(
  grant: GrantFile,
  anchors: DelegationAnchors,
  wallet: Hex,
  token: Hex,
  asset: GrantAsset = 'USDC',
): Promise<void> {
  const d = delegationOf(grant, asset);
  const fail = (why: string): never => {
    throw new RefusedError('budget_pull_refused', `refused: the recorded grant ${grant.delegations[0]!.hash} ${why}; nothing was signed`, {
      hint: 'import the grant file the owner wrote again (`loopsign budget import`)',
    });
  };
  let limits: ReturnType<typeof decodeGrantCaveats> | undefined;
  try {
    limits = decodeGrantCaveats(anchors.contracts, d.caveats);
  } catch (error) {
    if (!(error instanceof GrantShapeError)) throw error;
    fail(`has caveats that are not a budget grant's (${error.message})`);
  }
  if (!isAddressEqual(limits!.session, wallet) || !isAddressEqual(limits!.token, token)) fail(`is not for ${asset} to this wallet`);
  if (delegationHash(d).toLowerCase() !== grantEntry(grant, asset)!.hash.toLowerCase()) fail('does not hash to its recorded hash (edited)');
  const signer = await delegationSigner(d, grant.chainId, anchors.contracts.delegationManager).catch(() => undefined);
  if (!signer || !isAddressEqual(signer, d.delegator) || !isAddressEqual(d.delegator, grant.owner as Address))
    fail('is not signed by its owner over these caveats (edited)');
}

export interface PullPlan {
  /** None when the wallet's free balance covers this stage and only later stages need the grant. */
  call?: PlanCall;
  /** Its own transaction before the stage's plan (ordered, x402), or a call of the stage's batch. */
  own: boolean;
  /** What the grant covers beyond the wallet's balance now: the pull (when batched) and later stages' pulls. */
  covers: Amounts;
  /** The call is this ask's journaled pull (found on chain, or its bytes sent again), not a new one. */
  reused?: boolean;
  /** The asset pulled: USDC, or LREP from a grant with LREP caps (an ask whose bounty or bonus is LREP). */
  asset?: GrantAsset;
}

type Decoded = { delegate: string; delegator: string; authority: string; caveats: unknown[]; salt: bigint | string; signature: string };
const hashOf = (d: Decoded) => delegationHash({ ...d, salt: BigInt(d.salt), caveats: d.caveats as never } as never);
/** Whether a decoded delegation is this grant's `asset` delegation (by the struct hash the enforcers key their state by). */
const sameGrant = (d: Decoded, g: GrantFile, asset: GrantAsset = 'USDC') =>
  hashOf(d).toLowerCase() === grantEntry(g, asset)?.hash.toLowerCase();

/**
 * Checks that a pull call redeems the imported grant to this wallet through the pinned DelegationManager, for the
 * pinned USDC: built here from the grant file, never from a service's answer, and checked again before signing.
 */
export function checkPullCall(
  call: PlanCall,
  o: { anchors: DelegationAnchors; grant: GrantFile; wallet: Hex; token: Hex; asset?: GrantAsset },
): bigint {
  const asset = o.asset ?? 'USDC';
  const fail = (why: string): never => {
    throw new RefusedError('budget_pull_refused', `refused: the budget pull ${why}; nothing was signed`, {
      hint: 'run `loopsign budget show` and import the grant again (`loopsign budget import`)',
      details: { rule: 'budget_pull_refused', to: call.to },
    });
  };
  if (!isAddressEqual(call.to, o.anchors.contracts.delegationManager))
    fail(`calls ${call.to}, not the pinned DelegationManager ${o.anchors.contracts.delegationManager}`);
  const pull = decodePullCall(call.data);
  if (!pull) return fail('is not one transfer through redeemDelegations');
  if (!isAddressEqual(pull.token, o.token)) fail(`moves the token ${pull.token}, not the pinned ${asset} ${o.token}`);
  if (!isAddressEqual(pull.recipient, o.wallet)) fail(`pays ${pull.recipient}, not this wallet ${o.wallet}`);
  if (pull.amount <= 0n) fail('moves nothing');
  const chain = decodeDelegations(pull.context);
  if (chain.length !== 1) fail(`redeems a chain of ${chain.length} delegations, not the grant alone`);
  const d = chain[0]!;
  if (!sameGrant(d, o.grant, asset))
    fail(`redeems delegation ${hashOf(d)}, not the imported grant's ${asset} delegation ${grantEntry(o.grant, asset)?.hash}`);
  if (!isAddressEqual(d.delegate as Address, o.wallet) || !isAddressEqual(d.delegator as Address, o.grant.owner as Address))
    fail(`redeems a delegation from ${d.delegator} to ${d.delegate}, not the grant from ${o.grant.owner} to this wallet`);
  return pull.amount;
}

/**
 * The pull a paying stage needs, or none: reused from the journal, or planned now (under the wallet's claim) from the
 * grant's state on chain. `later` is what later stages of this ask will pull for (checked against the grant now, so an
 * ask the grant cannot finish is refused before its reservation).
 */
export async function planPull(run: Run, stage: PayingStage, batch: boolean): Promise<PullPlan | undefined> {
  const { ctx, chain, client, journal } = run;
  const reused = journaledPull(run, stage);
  // The asset pulled: a journaled pull's own token; else LREP when this stage pays LREP only and the newest grant has
  // LREP caps (an LREP bounty or bonus); else USDC, as before LREP caps existed (a grant without them pulls no LREP:
  // the wallet pays LREP from its own balance, and the USDC a later stage needs is still checked now).
  const caps = askSpendCaps(run.ask, 'the ask', journal.data.paymentMode ?? run.mode);
  const reusedToken = reused && decodePullCall(reused.call.data)?.token;
  const lrepToken = chain.tokens.LREP.address as Hex | undefined;
  const grants = chain.tokens.USDC.address ? await sessionGrants(ctx.paths.state, chain.chainId, run.wallet) : [];
  const paysLrepOnly = (caps.stage(stage).USDC ?? 0n) === 0n && (caps.stage(stage).LREP ?? 0n) > 0n;
  const asset: GrantAsset = reusedToken
    ? lrepToken && isAddressEqual(reusedToken, lrepToken)
      ? 'LREP'
      : 'USDC'
    : paysLrepOnly && lrepToken && grants[0] && grantEntry(grants[0], 'LREP')
      ? 'LREP'
      : 'USDC';
  const token = chain.tokens[asset].address as Hex | undefined;
  // A journaled pull is checked against the grant it redeems (a newer grant imported since does not replace it).
  const redeemed = reused && decodePullCall(reused.call.data);
  const grant = redeemed
    ? grants.find((g) => {
        const d = decodeDelegations(redeemed.context);
        return d.length === 1 && sameGrant(d[0]!, g, asset);
      })
    : grants[0] && grantEntry(grants[0], asset)
      ? grants[0]
      : undefined;
  if (!grant || !token) {
    if (reused)
      throw new RefusedError(
        'budget_pull_refused',
        'refused: this ask journaled a budget pull, and the grant it redeems is no longer among the imported grants',
        {
          hint: 'import the grant again (`loopsign budget import`) and run the same ask again',
        },
      );
    return undefined;
  }
  const { settings } = await ctx.chain();
  const anchors = delegationAnchors(chain.chainId, settings.manifest);
  if (!chain.delegationManager || !isAddressEqual(chain.delegationManager, anchors.contracts.delegationManager))
    throw new ChainError('budget_unavailable', `no DelegationManager is pinned for chain ${chain.chainId} beside the grant's anchors`, {
      hint: 'restart the sandbox (its manifest names the delegation contracts), or use Base',
    });
  if (reused) {
    // Checked against the grant it redeems, which a newer grant imported since (other caps) does not replace: the
    // journaled pull is this ask's, found on chain or its very bytes sent again, never signed anew.
    const grants = await sessionGrants(ctx.paths.state, chain.chainId, run.wallet);
    const redeemed = grants.find((g) => {
      try {
        checkPullCall(reused.call, { anchors, grant: g, wallet: run.wallet, token, asset });
        return true;
      } catch {
        return false;
      }
    });
    checkPullCall(reused.call, { anchors, grant: redeemed ?? grant, wallet: run.wallet, token, asset });
    return { call: reused.call, own: reused.own, covers: {}, reused: true, asset };
  }
  // Paid already in an earlier run (the payment of this stage is signed): nothing to pull for it. An approval alone
  // moved nothing yet (a run that started before the grant was imported still pulls for its submit).
  if (
    journal
      .txsFor(stage)
      .some((t) => isLive(t) && callsOfRawTransaction(t.raw, run.wallet).some((c) => callEffects(chain, c).some((e) => e.kind === 'pull')))
  )
    return undefined;
  const needed = caps.stage(stage)[asset] ?? 0n;
  const later = stage === 'ask' ? (caps.stage('bonus')[asset] ?? 0n) : 0n;
  if (needed + later === 0n) return undefined;
  const balance = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [run.wallet] });
  const others = await pulledNotPaid(run, token);
  const free = balance > others ? balance - others : 0n;
  const total = needed + later - free;
  if (total <= 0n) return undefined;
  const amount = needed > free ? needed - free : 0n;
  // The recorded file is the one `budget import` checked: checked again here (it may have been edited since) before
  // the chain is asked anything about it.
  await checkRecordedGrant(grant, anchors, run.wallet, token, asset);
  // The chain's word on the grant: the pinned contracts' code, the owner still on the DeleGator, the enforcers' state.
  await checkDelegationCode(client, anchors, ctx.paths.state);
  let state: GrantState;
  try {
    const [s, code] = await Promise.all([
      readGrantState(client, anchors.contracts, grant, asset),
      client.getCode({ address: grant.owner as Address }),
    ]);
    state = s;
    const target = delegatedTo(code);
    if (!target || !isAddressEqual(target, anchors.contracts.deleGator))
      throw new RefusedError(
        'budget_revoked',
        `the owner ${grant.owner} no longer runs the pinned DeleGator ${anchors.contracts.deleGator}: grant ${grant.delegations[0]!.hash} cannot be redeemed; nothing was signed or paid`,
        { hint: 'ask the owner for a new grant (`loopsign budget grant` sets the delegation again)' },
      );
  } catch (error) {
    if (error instanceof RefusedError) throw error;
    throw new ChainError(
      'budget_unavailable',
      `the grant's state could not be read from the chain: ${(error as Error).message}; nothing was signed or paid`,
      {
        hint: 'check the RPC (--rpc-url) and run the same ask again',
        cause: error,
      },
    );
  }
  refuseUnusable(state, total);
  const fmt = shown(state);
  ctx.out.progress(
    'budget.check',
    `grant ${state.grant}: ${state.windows.map((w) => `${fmt(w.available)} left this ${w.window === 'day' ? 'UTC day' : '30-day period'}`).join(', ')}; this ask pulls ${fmt(total)} (the wallet has ${fmt(free)} free)`,
  );
  const covers: Amounts = { [asset]: batch ? total : total - amount };
  if (amount === 0n) return { own: !batch, covers, asset };
  // A pull of its own is mined before the stage's payment is admitted: the spend caps and the policy (its windows may
  // have filled since the preflight, by another process's ask) are asked now whether this stage may pay what it needs,
  // so O's money never moves for a payment the ledger would then refuse. A batched pull shares its payment's admission.
  if (!batch) {
    const escrow = stage === 'ask' ? chain.contracts.questionRewardPoolEscrow : chain.contracts.feedbackBonusEscrow;
    await run.ledger.check(stage, [{ asset, kind: 'pull', spender: (escrow ?? token) as Hex, amount: needed }], client);
  }
  const call: PlanCall = {
    phase: PHASE,
    description: `pull ${fmt(amount)} from ${grant.owner} under grant ${state.grant}`,
    to: anchors.contracts.delegationManager,
    data: pullCalldata(delegationOf(grant, asset), token, run.wallet, amount),
    value: '0',
  };
  checkPullCall(call, { anchors, grant, wallet: run.wallet, token, asset });
  return { call, own: !batch, covers, asset };
}

/**
 * A stage's own pull, sent and mined now (ordered plans, x402 before its authorization), under the claim the caller
 * holds. Returns the batched pull for the caller to add to its plan, and what the grant covers for the funds check.
 */
export async function pullBefore(
  run: Run,
  ex: Executor,
  stage: PayingStage,
  mode: ExecutionMode | 'x402',
  /**
   * Checks the wallet's funds (gas, and tokens with `covers`: what the grant adds, this pull included) before a new pull
   * of its own is sent, so a payment that cannot be sent never moves the owner's money first. Returns whether it ran.
   */
  beforeNewPull?: (covers: Amounts) => Promise<void>,
): Promise<{ batched?: PlanCall; covers: Amounts; fundsChecked?: boolean }> {
  const plan = await planPull(run, stage, mode === 'atomic' || mode === 'segmented');
  if (!plan?.call) return { covers: plan?.covers ?? {} };
  if (!plan.own) return { batched: plan.call, covers: plan.covers };
  if (!plan.reused && beforeNewPull) {
    const amount = decodePullCall(plan.call.data)?.amount ?? 0n;
    const asset = plan.asset ?? 'USDC';
    await beforeNewPull({ ...plan.covers, [asset]: (plan.covers[asset] ?? 0n) + amount });
    run.ctx.out.progress(`${pullStage(stage)}.send`, plan.call.description ?? 'pulling from the grant');
    await ex.execute(pullStage(stage), [plan.call], 'ordered');
    return { covers: plan.covers, fundsChecked: true };
  }
  run.ctx.out.progress(`${pullStage(stage)}.send`, plan.call.description ?? 'pulling from the grant');
  await ex.execute(pullStage(stage), [plan.call], 'ordered');
  return { covers: plan.covers };
}

/** The plan with the batched pull just before its first call that spends (so it shares that call's batch). */
export function withPull(run: Run, calls: PlanCall[], pull: PlanCall | undefined): PlanCall[] {
  if (!pull) return calls;
  const at = calls.findIndex((c) => callEffects(run.chain, c).length > 0);
  const out = [...calls];
  out.splice(at < 0 ? 0 : at, 0, pull);
  return out;
}

/** A paying stage's plan, with its budget pull, under the wallet's claim. */
export async function executeWithPull(
  run: Run,
  ex: Executor,
  stage: PayingStage,
  calls: PlanCall[],
  mode: ExecutionMode,
): Promise<ExecutionResult> {
  return ex.withWalletLock(async () => {
    const { batched } = await pullBefore(run, ex, stage, mode);
    return ex.execute(stage, withPull(run, calls, batched), mode);
  });
}
