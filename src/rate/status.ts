// `rate status` and `rate reveal`.
import { encodeFunctionData, type Hex } from 'viem';
import type { Context } from '../context.js';
import { ChainError, UsageError } from '../errors.js';
import { sameAddress } from '../hex.js';
import { rateLedger } from './flow.js';
import { Operation, operationsOf, type OperationSnapshot } from '../store/operation.js';
import { votingEngineAbi } from '../protocol/abi.js';
import { roundTime } from '../vote/drand.js';
import type { ChainConfig } from '../chains/table.js';
import { Executor } from '../wallet/executor.js';

/** This wallet's votes on a question, from its journals: one per operation (a later round's vote is its own). */
function votesOn(snapshots: OperationSnapshot<'rate'>[], contentId: string, chain: ChainConfig) {
  const d = chain.drand;
  return snapshots
    .filter((o) => o.data.contentId === contentId && o.data.commit)
    .map((o) => {
      const c = o.data.commit!;
      return {
        operation: o.id,
        roundId: c.roundId,
        commitHash: c.commitHash,
        commitKey: c.secret.commitKey,
        stakeWei: c.stakeWei,
        state: o.step === 'rate:confirmed' ? 'committed' : 'not confirmed',
        revealableAt: new Date((roundTime(Number(c.targetRound), d.genesis, d.period) + d.period) * 1000).toISOString(),
        setAside: o.id.includes('~'),
      };
    });
}

/** The service's rating status of this wallet's vote, with every vote on the question this machine journaled. */
export async function rateStatus(
  ctx: Context,
  contentId: string,
): Promise<{ service: Record<string, unknown>; votes: ReturnType<typeof votesOn> }> {
  if (!/^[1-9][0-9]*$/.test(contentId)) throw new UsageError('invalid_content_id', `--content-id ${contentId} must be a positive integer`);
  const chain = (await ctx.chainSettings()).chain;
  const wallet = (await ctx.walletAddress()).toLowerCase();
  const votes = votesOn(operationsOf(await ctx.store(), 'rate', chain.chainId, wallet), contentId, chain);
  const mcp = await ctx.mcp();
  try {
    return { service: await mcp.call('rateloop_get_rating_status', { contentId, chainId: chain.chainId, walletAddress: wallet }), votes };
  } finally {
    await mcp.close();
  }
}

/**
 * Reveal a committed vote from the journal (anyone may, once the beacon round is out). Whether it is revealed
 * already is the voting engine's own record of the commit (issue 11 §6), never the service's word.
 */
export async function rateReveal(ctx: Context, contentId: string): Promise<Record<string, unknown>> {
  if (!/^[1-9][0-9]*$/.test(contentId)) throw new UsageError('invalid_content_id', `--content-id ${contentId} must be a positive integer`);
  const settings = await ctx.chainSettings();
  const chain = settings.chain;
  const signer = await ctx.wallet();
  const wallet = signer.address.toLowerCase() as Hex;
  const store = await ctx.store();
  // The latest confirmed vote on the question (an earlier round's was revealed in its round, or can no longer be).
  const data = operationsOf(store, 'rate', chain.chainId, wallet)
    .filter((o) => o.data.contentId === contentId && o.data.commit && o.step === 'rate:confirmed')
    .at(-1);
  const commit = data?.data.commit;
  if (!data || !commit)
    throw new UsageError('no_commit', `no confirmed commit for question ${contentId} in the journal of ${wallet}`, {
      hint: 'only votes committed from this machine can be revealed here; `loopsign rate status` lists them',
    });
  if (commit.stakeWei === '0')
    throw new UsageError(
      'advisory_vote',
      `the vote on question ${contentId} is advisory: it is recorded, not revealed on the voting engine`,
    );
  const { client } = await ctx.chain();
  const engine = chain.contracts.roundVotingEngine as Hex;
  const onChain = await client.readContract({
    address: engine,
    abi: votingEngineAbi,
    functionName: 'commitCore',
    args: [BigInt(contentId), BigInt(commit.roundId), commit.secret.commitKey],
  });
  const [voter, , , , revealed] = onChain;
  if (!sameAddress(voter, wallet)) {
    throw new ChainError(
      'commit_not_on_chain',
      `the voting engine has no commit ${commit.secret.commitKey} of ${wallet} for question ${contentId}, round ${commit.roundId}`,
      {
        hint: 'the commit transaction may not be mined: run `loopsign rate` again with the same flags to resume it',
      },
    );
  }
  if (revealed) return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'already on chain' };
  const call = {
    phase: 'reveal_vote',
    to: engine,
    data: encodeFunctionData({
      abi: votingEngineAbi,
      functionName: 'revealVoteByCommitKey',
      args: [
        BigInt(contentId),
        BigInt(commit.roundId),
        commit.secret.commitKey,
        commit.secret.isUp,
        commit.secret.predictedUpBps,
        commit.secret.salt,
      ],
    }),
    value: '0',
  };
  const journal = await Operation.open(store, 'rate', data.id, { chainId: chain.chainId, wallet, data: { contentId } });
  try {
    const account = await signer.account;
    const ledger = rateLedger(journal, chain, wallet, 0n);
    const { hashes } = await new Executor({
      client,
      account,
      chain,
      op: journal,
      out: ctx.out,
      ledger,
      allowDelegation: false,
      maxFeePerGas: settings.maxFeePerGas.value,
    }).execute(`reveal:${commit.roundId}`, [call], 'ordered');
    return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'loopsign', transactionHashes: hashes };
  } finally {
    await journal.close();
  }
}
