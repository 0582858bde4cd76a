// `rate commit --offline`: buildCommitVoteParams with no network, loading none of the online machinery.
import type { Hex } from 'viem';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import { QUICKNET, QUICKNET_T, type DrandNetwork } from '../chains/table.js';
import { Operation, operationId } from '../store/operation.js';
import { buildCommitVoteParams, type CommitRuntime } from '../vote/build.js';
import { isDoc, objectField } from '../service/doc.js';
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

/** What the runtime file gives buildCommitVoteParams, each field shown to be of its type. */
interface OfflineRuntime extends CommitRuntime {
  roundId: bigint;
  roundReferenceRatingBps: number;
  epochDuration: string | number;
}

const REQUIRED = [
  'roundId',
  'roundReferenceRatingBps',
  'epochDuration',
  'drandChainHash',
  'drandGenesisTimeSeconds',
  'drandPeriodSeconds',
] as const;

/**
 * The --runtime file: the rating context's runtime object, or a document holding it under "runtime". Every field
 * buildCommitVoteParams reads is checked for its type here (it checks the values): an integer is a decimal string
 * or a safe integer, never a number JSON has already rounded (above 2^53) nor hex, so that no round id is silently
 * another one.
 */
function readRuntime(doc: unknown, file: string): OfflineRuntime {
  const inner = objectField(doc, 'runtime');
  // A "runtime" field that is no object is a malformed file, not a sign to read the fields beside it instead.
  if (inner === undefined && isDoc(doc) && doc.runtime !== undefined && doc.runtime !== null)
    throw new UsageError('invalid_runtime', `${file}: runtime.runtime must be an object (the rating context's runtime object)`);
  const r = inner ?? doc;
  if (!isDoc(r))
    throw new UsageError('invalid_runtime', `${file}: a runtime file holds a JSON object (the rating context's runtime object)`);
  for (const k of REQUIRED) {
    if (r[k] === undefined || r[k] === null)
      throw new UsageError('invalid_runtime', `${file}: runtime.${k} is required (the rating context's runtime object)`);
  }
  const wrong = (k: string, what: string) => new UsageError('invalid_runtime', `${file}: runtime.${k} must be ${what}`);
  /** A non-negative integer: a decimal string, or a JSON number that is a safe integer. */
  const integer = (k: string): string | number => {
    const v = r[k];
    if ((typeof v === 'string' && /^[0-9]{1,78}$/.test(v)) || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) return v;
    throw wrong(k, 'a non-negative integer (a decimal string, or a number below 2^53)');
  };
  const optional = (k: string): string | number | undefined => (r[k] === undefined || r[k] === null ? undefined : integer(k));
  const roundId = BigInt(integer('roundId'));
  if (roundId === 0n) throw wrong('roundId', 'positive');
  const bps = Number(integer('roundReferenceRatingBps'));
  if (!Number.isSafeInteger(bps)) throw wrong('roundReferenceRatingBps', 'a number below 2^53');
  const hash = r.drandChainHash;
  if (typeof hash !== 'string') throw wrong('drandChainHash', 'a hex string (the drand chain hash)');
  return {
    roundId,
    roundReferenceRatingBps: bps,
    epochDuration: integer('epochDuration'),
    drandChainHash: hash,
    drandGenesisTimeSeconds: integer('drandGenesisTimeSeconds'),
    drandPeriodSeconds: integer('drandPeriodSeconds'),
    targetRound: optional('targetRound'),
    roundStartTimeSeconds: optional('roundStartTimeSeconds'),
  };
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
  const r = readRuntime(await readUserJson(o.runtime, 'runtime file'), o.runtime);
  try {
    const built = await buildCommitVoteParams(
      {
        voter: o.voter as Hex,
        contentId: BigInt(o.contentId),
        isUp: o.isUp,
        predictedUpPercent: o.prediction,
        stakeAmount: o.stake,
        epochDuration: r.epochDuration,
        roundId: r.roundId,
        roundReferenceRatingBps: r.roundReferenceRatingBps,
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
