// `rate status` and `rate reveal`.
import { encodeFunctionData, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
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

/** Reveal a committed vote from the journal (anyone may, once the beacon round is out). */
export async function rateReveal(ctx: Context, contentId: string): Promise<Record<string, unknown>> {
  if (!/^[1-9][0-9]*$/.test(contentId)) throw new UsageError('invalid_content_id', `--content-id ${contentId} must be a positive integer`);
  const env = await askEnvironment(ctx, false);
  const chain = env.chain.chain;
  const wallet = env.signer.address.toLowerCase();
  const data = await Journal.read(journalId('rate', [chain.chainId, wallet, contentId]));
  const commit = data?.commit as BuiltCommit | undefined;
  if (!commit || data?.step !== 'rate:confirmed') throw new UsageError('no_commit', `no confirmed commit for question ${contentId} in the journal of ${wallet}`);
  const status = await rateStatus(ctx, contentId).catch(() => undefined);
  if (status?.status === 'revealed') return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'keeper' };
  const client = await connectChain(env.chain);
  const engine = chain.contracts.roundVotingEngine as Hex;
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
    const { hashes } = await new Executor(client, account, chain, journal, ctx.out, false).execute(`reveal:${commit.roundId}`, [call], 'ordered');
    return { contentId, roundId: commit.roundId, status: 'revealed', revealedBy: 'loopsign', transactionHashes: hashes };
  } finally {
    await journal.close();
  }
}
