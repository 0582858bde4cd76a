// The owner's budget transactions (issue 38): the EIP-7702 delegation a first grant needs, and the revocations. Each is
// an operation of its own, run by the executor like every transaction loopsign signs: journaled before it leaves the
// process, under the wallet's claim, in a nonce slot, resumed byte for byte by a rerun. None of them pays anything: the
// spend ledger admits them with every cap at zero, and only the revocation calls of the chain's pinned anchors are
// accounted for (spend-effects.ts, chain.delegation).
import type { Hex, LocalAccount, PublicClient } from 'viem';
import type { Context } from '../context.js';
import type { ChainConfig } from '../chains/table.js';
import type { DelegationAnchors } from '../chains/delegation.js';
import { Operation, operationId } from '../store/operation.js';
import { SpendLedger } from '../store/ledger.js';
import { checkSameChain, genesisHash } from '../store/chain-identity.js';
import { latestCount, walletMemoryCheck } from '../store/nonce-mark.js';
import { Executor } from '../wallet/executor.js';

export interface OwnerTxDeps {
  ctx: Context;
  client: PublicClient;
  chain: ChainConfig;
  anchors: DelegationAnchors;
  account: LocalAccount;
  /** Why this signer cannot sign an EIP-7702 authorization, if it cannot (a JSON-RPC signer). */
  cannotDelegate: string | undefined;
  maxFeePerGas: bigint;
}

/**
 * Runs `fn` with the executor of one owner operation: `parts` name it (with the chain instance's block 0, so a restarted
 * sandbox's deterministic addresses never resume a journal of the old instance). The database's memory of the wallet
 * is checked before anything is signed, as an ask's is.
 */
export async function withOwnerOperation<T>(
  d: OwnerTxDeps,
  parts: (string | number)[],
  fn: (executor: Executor, op: Operation<'budget'>) => Promise<T>,
): Promise<T> {
  const store = await d.ctx.store();
  const wallet = d.account.address.toLowerCase() as Hex;
  const genesis = await genesisHash(d.client);
  const id = operationId('budget', [d.chain.chainId, genesis, wallet, ...parts]);
  const op = await Operation.open(store, 'budget', id, { chainId: d.chain.chainId, wallet, data: {} });
  try {
    await checkSameChain(d.client, op, '--set-aside-stale');
    const chain: ChainConfig = {
      ...d.chain,
      delegation: { delegationManager: d.anchors.contracts.delegationManager, nonceEnforcer: d.anchors.contracts.nonceEnforcer },
    };
    const checkMemory = walletMemoryCheck({
      store,
      mark: () => ({ chainId: chain.chainId, genesis: op.chainGenesis ?? '', wallet }),
      count: latestCount(d.client, wallet),
      accept: false,
      now: () => d.ctx.clock.now(),
      warn: (m) => d.ctx.out.warn(m),
    });
    await checkMemory();
    const executor = new Executor({
      client: d.client,
      account: d.account,
      chain,
      op,
      out: d.ctx.out,
      ledger: new SpendLedger(op, chain, wallet, { stage: () => ({}), source: 'a budget delegation or revocation, which pays nothing' }),
      allowDelegation: true,
      ...(d.cannotDelegate !== undefined ? { cannotDelegate: d.cannotDelegate } : {}),
      maxFeePerGas: d.maxFeePerGas,
    });
    return await fn(executor, op);
  } finally {
    await op.close();
  }
}

/**
 * Points the owner's account at the pinned DeleGator (a first grant): one journaled type-4 self-transaction. A rerun
 * after a kill resumes the journaled one (found on chain, or its very bytes sent again), never a second authorization.
 */
export function delegateOwner(d: OwnerTxDeps): Promise<Hex | undefined> {
  const deleGator = d.anchors.contracts.deleGator;
  return withOwnerOperation(d, ['delegate', deleGator.toLowerCase()], (executor) => executor.setDelegation('delegate', deleGator));
}
