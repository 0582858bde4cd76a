// `rate status` and `rate reveal`.
import { encodeFunctionData, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Context } from '../context.js';
import { ChainError, UsageError } from '../errors.js';
import { rateLedger } from './flow.js';
import { Journal, journalId } from '../journal/journal.js';
import { votingEngineAbi } from '../protocol/abi.js';
import { McpClient } from '../service/mcp.js';
import { askEnvironment } from '../ask/prepare.js';
import { connectChain } from '../chains/client.js';
import type { BuiltCommit } from '../vote/build.js';
import { Executor } from '../wallet/executor.js';

export async function rateStatus(ctx: Context, contentId: string): Promise<Record<string, unknown>> {
  if (!/^[1-9][0-9]*$/.test(contentId)) throw new UsageError('invalid_content_id', `--content-id ${contentId} must be a positive integer`);
  const env = await askEnvironment(ctx, false);
  const mcp = new McpClient(env.chain.baseUrl.value ?? 'https://www.rateloop.ai');
  try {
    return await mcp.call('rateloop_get_rating_status', { contentId, chainId: env.chain.chain.chainId, walletAddress: env.signer.address.toLowerCase() });
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
  const env = await askEnvironment(ctx, false);
  const chain = env.chain.chain;
  const wallet = env.signer.address.toLowerCase() as Hex;
  const data = await Journal.read(journalId('rate', [chain.chainId, wallet, contentId]));
  const commit = data?.commit as BuiltCommit | undefined;
  if (!commit || data?.step !== 'rate:confirmed') throw new UsageError('no_commit', `no confirmed commit for question ${contentId} in the journal of ${wallet}`);
  if (commit.stakeWei === '0') throw new UsageError('advisory_vote', `the vote on question ${contentId} is advisory: it is recorded, not revealed on the voting engine`);
  const client = await connectChain(env.chain);
  const engine = chain.contracts.roundVotingEngine as Hex;
  const onChain = await client.readContract({ address: engine, abi: votingEngineAbi, functionName: 'commitCore', args: [BigInt(contentId), BigInt(commit.roundId), commit.secret.commitKey] });
  const [voter, , , , revealed] = onChain;
  if (voter.toLowerCase() !== wallet) {
    throw new ChainError('commit_not_on_chain', `the voting engine has no commit ${commit.secret.commitKey} of ${wallet} for question ${contentId}, round ${commit.roundId}`, {
      hint: 'the commit transaction may not be mined: run `loopsign rate` again with the same flags to resume it',
    });
  }
  if (revealed) return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'already on chain' };
  const call = {
    phase: 'reveal_vote',
    to: engine,
    data: encodeFunctionData({
      abi: votingEngineAbi,
      functionName: 'revealVoteByCommitKey',
      args: [BigInt(contentId), BigInt(commit.roundId), commit.secret.commitKey, commit.secret.isUp, commit.secret.predictedUpBps, commit.secret.salt],
    }),
    value: '0',
  };
  const journal = await Journal.open(journalId('rate', [chain.chainId, wallet, contentId]), { kind: 'rate', chainId: chain.chainId, wallet });
  try {
    const account = privateKeyToAccount(toHex(env.signer.privateKey));
    const ledger = rateLedger(journal, chain, wallet, 0n);
    const { hashes } = await new Executor({ client, account, chain, journal, out: ctx.out, ledger, allowDelegation: false, maxFeePerGas: env.chain.maxFeePerGas.value }).execute(`reveal:${commit.roundId}`, [call], 'ordered');
    return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'loopsign', transactionHashes: hashes };
  } finally {
    await journal.close();
  }
}
