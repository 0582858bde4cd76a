// What one ask run shares with its steps (src/ask/flow.ts orchestrates them): the chain and its client, the
// signer's account (resolving when the key is ready), the operation's journal and its spend ledger, and how plans
// may be executed.
import type { Hex, LocalAccount, PublicClient } from 'viem';
import type { Context } from '../context.js';
import type { ChainConfig } from '../chains/table.js';
import type { Operation } from '../store/operation.js';
import type { SpendLedger } from '../store/ledger.js';
import type { ServiceClient } from '../service/client.js';
import type { NormalizedAsk, PaymentMode } from '../protocol/ask-normalize.js';
import type { GuardContext } from '../wallet/plan-guard.js';
import { Executor } from '../wallet/executor.js';
import { confirmCount, latestCount, unconfirmedCount, walletMemoryCheck } from '../store/nonce-mark.js';
import { RefusedError } from '../errors.js';

export interface Run {
  ctx: Context;
  chain: ChainConfig;
  client: PublicClient;
  service: ServiceClient;
  /** The wallet's address, lowercase. */
  wallet: Hex;
  /** Resolves when the signer is ready (the keystore's key derivation overlaps the service call). */
  account: Promise<LocalAccount>;
  journal: Operation<'ask'>;
  ledger: SpendLedger;
  ask: NormalizedAsk;
  /** The body sent to the service. */
  body: Record<string, unknown>;
  mode: PaymentMode;
  maxFeePerGas: bigint;
  atomic: boolean;
  waitFinal?: boolean;
  /** Why the signer cannot sign an EIP-7702 authorization, if it cannot. */
  cannotDelegate: string | undefined;
  /** The guard context for a metadata base (the journaled one, or the service's public one). */
  guard(metadataBase?: string): GuardContext;
  /** The wallet's transaction count on chain, read when the run opened (src/store/nonce-mark.ts). */
  walletCount: Promise<bigint>;
  /** --accept-foreign-nonces: the user confirms the wallet's count on chain as explained. */
  acceptForeignNonces: boolean;
  /** The database's memory of the wallet checked against that count, once per run, before the first signature. */
  walletMarkChecked?: Promise<void>;
  /** The run's executor, once made (src/ask/run.ts). */
  executorInstance?: Promise<Executor>;
}

/** Warns before signing from a database that does not explain the wallet's count on chain (state loss, other software). */
function checkWalletMemory(run: Run): Promise<void> {
  run.walletMarkChecked ??= walletMemoryCheck({
    store: run.journal.store,
    mark: () => ({ chainId: run.chain.chainId, genesis: run.journal.chainGenesis ?? '', wallet: run.wallet }),
    count: run.walletCount,
    accept: run.acceptForeignNonces,
    now: () => run.ctx.clock.now(),
    warn: (m) => run.ctx.out.warn(m),
  })();
  return run.walletMarkChecked;
}

/**
 * Before a feedback bonus pool is signed (the contracts accept any number of pools for a question): the wallet's count
 * on chain must be what the database recorded or the user confirmed. Otherwise the database may not know a pool this
 * wallet funded (restored from a backup, or another state folder or program paid it), and the chain's events, read
 * once, are then the only memory: nothing is signed until a person confirms (--accept-foreign-nonces) after checking.
 */
export async function refuseUnconfirmedNonces(run: Run, contentId: string): Promise<void> {
  const m = { chainId: run.chain.chainId, genesis: run.journal.chainGenesis ?? '', wallet: run.wallet };
  const count = await latestCount(run.client, run.wallet);
  const gap = unconfirmedCount(run.journal.store, m, count);
  if (!gap) return;
  if (run.acceptForeignNonces) {
    await confirmCount(run.journal.store, m, count, run.ctx.clock.now());
    return;
  }
  throw new RefusedError(
    'wallet_nonces_unexplained',
    `wallet ${run.wallet} has sent ${count} transactions on chain ${run.chain.chainId}, but loopsign's database knows of ${gap.explained}: it may not know a feedback bonus pool this wallet already funded for question ${contentId}, so none was signed`,
    {
      hint: `a person checks the wallet's latest transactions for a feedback bonus pool for question ${contentId}; if there is none, run the same command again with --accept-foreign-nonces`,
      details: { walletCount: count.toString(), explained: gap.explained.toString(), contentId },
    },
  );
}

/** The executor, once the signer is ready and the database's memory of the wallet is checked. */
export async function executor(run: Run): Promise<Executor> {
  await checkWalletMemory(run);
  return newExecutor(run);
}

/**
 * An executor used only to settle what a stage journaled (found on chain, or its own bytes sent again): it allocates no
 * nonce, so it needs no check of the database's memory of the wallet. It may sign a fee bump of a journaled transaction
 * the base fee left behind: the same calls at that transaction's own nonce (only one of them can be mined).
 */
export async function settler(run: Run): Promise<Pick<Executor, 'settleJournaled'>> {
  return newExecutor(run);
}

/**
 * One executor per run: a stage that holds the wallet's claim across several executions (a budget pull, then the plan
 * it pays for: src/budget/pull.ts) runs them on the same instance, which knows it holds the claim.
 */
function newExecutor(run: Run): Promise<Executor> {
  run.executorInstance ??= buildExecutor(run);
  return run.executorInstance;
}

async function buildExecutor(run: Run): Promise<Executor> {
  return new Executor({
    client: run.client,
    account: await run.account,
    chain: run.chain,
    op: run.journal,
    out: run.ctx.out,
    ledger: run.ledger,
    allowDelegation: run.atomic,
    cannotDelegate: run.cannotDelegate,
    maxFeePerGas: run.maxFeePerGas,
    waitFinal: run.waitFinal,
    deleGator: async () => {
      const { trustedDeleGator } = await import('../chains/delegation.js');
      return trustedDeleGator(run.client, run.chain.chainId, (await run.ctx.chain()).settings.manifest, run.ctx.paths.state);
    },
  });
}
