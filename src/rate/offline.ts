// `rate commit --offline`, `rate status`, `rate reveal`.
import { toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { QUICKNET, QUICKNET_T, type DrandNetwork } from '../chains/table.js';
import { Journal, journalId } from '../journal/journal.js';
import { votingEngineAbi } from '../protocol/abi.js';
import { McpClient } from '../service/mcp.js';
import { askEnvironment } from '../ask/prepare.js';
import { connectChain } from '../chains/client.js';
import { buildCommitVoteParams, type BuiltCommit } from '../vote/build.js';
import { VoteInputError } from '../vote/stake.js';
import { Executor } from '../wallet/executor.js';
import { encodeFunctionData } from 'viem';
import { parseRateInputs } from './flow.js';

export interface OfflineOptions {
  runtime: string;
  voter: string;
  contentId: string;
  isUp: boolean;
  prediction: string;
  stake: string;
  salt?: string;
  frontend?: string;
}

/** The drand networks an offline commit may target: the pinned public ones and, if configured, the sandbox's. */
async function knownNetworks(ctx: Context): Promise<DrandNetwork[]> {
  const networks = [QUICKNET, QUICKNET_T];
  try {
    const config = await ctx.config();
    const { readSandboxManifest, sandboxManifestPath } = await import('../chains/index.js');
    const m = await readSandboxManifest(sandboxManifestPath(config));
    if (m) networks.push(m.drand);
  } catch {
    // no sandbox configured
  }
  return networks;
}

/** buildCommitVoteParams with no network: the interface document's input and output objects. */
export async function offlineCommit(ctx: Context, o: OfflineOptions): Promise<Record<string, unknown>> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(o.voter)) throw new UsageError('invalid_voter', `--voter ${o.voter} is not an address`);
  if (o.salt !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(o.salt)) throw new UsageError('invalid_salt', '--salt must be 0x + 64 hex (32 bytes)');
  parseRateInputs({ ...o, stake: o.stake === '0' ? '0' : o.stake });
  const runtime = (await readUserJson(o.runtime, 'runtime file')) as Record<string, any>;
  const r = runtime.runtime && typeof runtime.runtime === 'object' ? runtime.runtime : runtime;
  for (const k of ['roundId', 'roundReferenceRatingBps', 'epochDuration', 'drandChainHash', 'drandGenesisTimeSeconds', 'drandPeriodSeconds']) {
    if (r[k] === undefined || r[k] === null) throw new UsageError('invalid_runtime', `${o.runtime}: runtime.${k} is required (the rating context's runtime object)`);
  }
  try {
    const built = await buildCommitVoteParams(
      {
        voter: o.voter as Hex,
        contentId: BigInt(o.contentId),
        isUp: o.isUp,
        predictedUpPercent: o.prediction,
        stakeAmount: o.stake,
        epochDuration: r.epochDuration,
        roundId: BigInt(r.roundId),
        roundReferenceRatingBps: Number(r.roundReferenceRatingBps),
        frontend: o.frontend as Hex | undefined,
        salt: o.salt as Hex | undefined,
        runtime: { targetRound: r.targetRound, drandChainHash: r.drandChainHash, drandGenesisTimeSeconds: r.drandGenesisTimeSeconds, drandPeriodSeconds: r.drandPeriodSeconds, roundStartTimeSeconds: r.roundStartTimeSeconds },
      },
      await knownNetworks(ctx),
    );
    const { secret, ...output } = built;
    // The secrets go to a journal so the vote can be proven or re-derived; stdout carries only the output object.
    const journal = await Journal.open(journalId('offline-commit', [o.voter, o.contentId, built.commitHash]), { kind: 'offline-commit', chainId: 0, wallet: o.voter.toLowerCase(), contentId: o.contentId });
    await journal.step('built', { commit: built });
    await journal.close();
    ctx.out.progress('rate.offline', `direction, prediction and salt are kept in ${journal.file}`, { journal: journal.file });
    void secret;
    return output;
  } catch (error) {
    if (error instanceof VoteInputError) throw new UsageError('invalid_vote', error.message, { details: { field: error.field } });
    throw error;
  }
}

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
