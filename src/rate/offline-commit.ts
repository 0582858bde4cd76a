// `rate commit --offline`: buildCommitVoteParams with no network, loading none of the online machinery.
import type { Hex } from 'viem';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { QUICKNET, QUICKNET_T, type DrandNetwork } from '../chains/table.js';
import { Operation, operationId } from '../store/operation.js';
import { buildCommitVoteParams } from '../vote/build.js';
import { VoteInputError, checkStakeBounds, parseStake, predictedUpBps } from '../vote/stake.js';
import { checkAddress } from '../address.js';

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
    const m = await readSandboxManifest(sandboxManifestPath(config, ctx.paths));
    if (m) networks.push(m.drand);
  } catch {
    // no sandbox configured
  }
  return networks;
}

/** buildCommitVoteParams with no network: the interface document's input and output objects. */
export async function offlineCommit(ctx: Context, o: OfflineOptions): Promise<Record<string, unknown>> {
  checkAddress(o.voter, '--voter', 'invalid_voter');
  if (o.salt !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(o.salt))
    throw new UsageError('invalid_salt', '--salt must be 0x + 64 hex (32 bytes)');
  if (!/^[1-9][0-9]*$/.test(o.contentId))
    throw new UsageError('invalid_content_id', `--content-id ${o.contentId} must be a positive integer`);
  try {
    checkStakeBounds(parseStake(o.stake));
    predictedUpBps(o.prediction);
  } catch (error) {
    if (error instanceof VoteInputError)
      throw new UsageError('invalid_vote', error.forFlags(), {
        details: { field: error.field, ...(error.flag ? { flag: error.flag } : {}) },
      });
    throw error;
  }
  const runtime = (await readUserJson(o.runtime, 'runtime file')) as Record<string, any>;
  const r = runtime.runtime && typeof runtime.runtime === 'object' ? runtime.runtime : runtime;
  for (const k of [
    'roundId',
    'roundReferenceRatingBps',
    'epochDuration',
    'drandChainHash',
    'drandGenesisTimeSeconds',
    'drandPeriodSeconds',
  ]) {
    if (r[k] === undefined || r[k] === null)
      throw new UsageError('invalid_runtime', `${o.runtime}: runtime.${k} is required (the rating context's runtime object)`);
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
        runtime: {
          targetRound: r.targetRound,
          drandChainHash: r.drandChainHash,
          drandGenesisTimeSeconds: r.drandGenesisTimeSeconds,
          drandPeriodSeconds: r.drandPeriodSeconds,
          roundStartTimeSeconds: r.roundStartTimeSeconds,
        },
      },
      await knownNetworks(ctx),
    );
    const { secret, ...output } = built;
    // The secrets go to a journal so the vote can be proven or re-derived; stdout carries only the output object.
    const store = await ctx.store();
    const journal = await Operation.open(store, 'offline-commit', operationId('offline-commit', [o.voter, o.contentId, built.commitHash]), {
      chainId: 0,
      wallet: o.voter.toLowerCase(),
      data: { contentId: o.contentId },
    });
    await journal.setStep('built', { commit: built });
    await journal.close();
    ctx.out.progress(
      'rate.offline',
      `direction, prediction and salt are kept in loopsign's database (${store.file}), operation ${journal.id}`,
      { operation: journal.id, store: store.file },
    );
    void secret;
    return output;
  } catch (error) {
    if (error instanceof VoteInputError)
      throw new UsageError('invalid_vote', error.forFlags(), {
        details: { field: error.field, ...(error.flag ? { flag: error.flag } : {}) },
      });
    throw error;
  }
}
