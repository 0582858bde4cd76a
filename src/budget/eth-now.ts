// `budget grant --eth-now` (issue 38): after the grant is signed, the owner sends the agent's session address a little
// ETH for gas, as one plain value transfer on the executor (journaled before it leaves the process, under the wallet's
// claim, in a nonce slot). Only this operation's chain copy names the transfer (chain.ethNow), so the spend ledger and
// the executor let exactly that value go to exactly that address, and no other operation may send ETH.
//
// A run killed after the transfer was journaled leaves its operation at step `eth_now:planned`: the next grant with
// --eth-now to the same session settles that one first (found on chain, or its very bytes sent again) and sends nothing
// more, so a rerun after a kill never sends twice.
import type { Hex } from 'viem';
import type { Address } from '../chains/table.js';
import { withOwnerOperation, type OwnerTxDeps } from './owner-tx.js';

const STAGE = 'eth_now';
const PLANNED = 'eth_now:planned';

export interface EthNowResult {
  transaction: Hex | null;
  /** The transfer is an earlier, interrupted run's (settled now), not a new one. */
  resumed: boolean;
  /** The wei that transfer sends: an earlier run's own amount when resumed, whatever this run asked for. */
  value: bigint;
}

const withTransfer = (d: OwnerTxDeps, to: Address, value: bigint): OwnerTxDeps => ({ ...d, chain: { ...d.chain, ethNow: { to, value } } });

export async function sendEthNow(d: OwnerTxDeps, r: { session: Address; value: bigint; grant: Hex }): Promise<EthNowResult> {
  const store = await d.ctx.store();
  const wallet = d.account.address.toLowerCase();
  const unfinished = await store.read(
    (db) =>
      db
        .prepare("SELECT id, data FROM operations WHERE kind = 'budget' AND chain_id = ? AND lower(wallet) = ? AND step = ?")
        .all(d.chain.chainId, wallet, PLANNED) as { id: string; data: string }[],
  );
  for (const row of unfinished) {
    const data = JSON.parse(row.data) as { ethNowTo?: string; ethNowWei?: string; ethNowGrant?: Hex };
    if (!data.ethNowTo || !data.ethNowWei || !data.ethNowGrant || data.ethNowTo.toLowerCase() !== r.session.toLowerCase()) continue;
    const sent = await withOwnerOperation(
      withTransfer(d, data.ethNowTo as Address, BigInt(data.ethNowWei)),
      ['eth-now', data.ethNowGrant.toLowerCase()],
      async (executor, op) => {
        await executor.settleJournaled(STAGE);
        const mined = op.txsFor(STAGE).find((t) => t.status === 'mined');
        await op.setStep('done');
        return mined?.hash;
      },
    );
    if (sent) {
      d.ctx.out.progress('budget.eth_now', `the earlier run's ETH transfer to ${r.session} is on chain (${sent}); nothing more is sent`);
      return { transaction: sent, resumed: true, value: BigInt(data.ethNowWei) };
    }
  }
  return withOwnerOperation(withTransfer(d, r.session, r.value), ['eth-now', r.grant.toLowerCase()], async (executor, op) => {
    await op.setStep(PLANNED, { ethNowTo: r.session, ethNowWei: r.value.toString(), ethNowGrant: r.grant } as never);
    d.ctx.out.progress('budget.eth_now', `sending ${r.value} wei to ${r.session} for its gas`);
    const { hashes } = await executor.execute(STAGE, [{ phase: STAGE, to: r.session, data: '0x', value: r.value.toString() }], 'ordered');
    await op.setStep('done');
    return { transaction: (hashes[0] as Hex | undefined) ?? null, resumed: false, value: r.value };
  });
}
