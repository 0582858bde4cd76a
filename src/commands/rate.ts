// loopsign rate | rate commit --offline | rate status | rate reveal (docs/rate.md)
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { serviceDocument } from '../output.js';
import type { VoteOptions } from './define.js';
import type { RateCommitOptions, RateLookupOptions, RateOptions } from './rate.def.js';

function direction(options: VoteOptions): boolean {
  if (options.up === true && options.down === true) throw new UsageError('usage', 'give --up or --down, not both');
  if (options.up !== true && options.down !== true) throw new UsageError('usage', 'give --up or --down');
  return options.up === true;
}

function required<O extends object>(options: O, ...names: (keyof O & string)[]): void {
  for (const n of names) {
    if (options[n] === undefined) throw new UsageError('usage', `--${n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is required`);
  }
}

export async function rate(ctx: Context, options: RateOptions): Promise<void> {
  required(options, 'contentId', 'prediction', 'stake');
  const { runRate } = await import('../rate/flow.js');
  const r = await runRate(ctx, {
    contentId: String(options.contentId),
    isUp: direction(options),
    prediction: String(options.prediction),
    stake: String(options.stake),
    frontend: options.frontend,
    acceptTerms: options.yes === true,
    atomic: options.atomic === true,
    newRound: options.newRound === true,
    setAsideStale: options.setAsideStale === true,
    waitFinal: options.waitFinal === true,
    acceptForeignNonces: options.acceptForeignNonces === true,
  });
  ctx.out.result(r, () =>
    [
      `committed a${r.advisory ? 'n advisory' : ` ${Number(r.stakeWei) / 1e6} LREP`} vote on question ${String(r.contentId)} (round ${String(r.roundId)})`,
      `  commit hash   ${String(r.commitHash)}`,
      `  drand round   ${String(r.targetRound)}, revealable from ${String(r.revealableAt)}`,
      `  transactions  ${(r.transactionHashes as string[]).join(', ')}`,
      `  journal       operation ${String(r.operation)} in loopsign's database (direction, prediction and salt; keep it)`,
    ].join('\n'),
  );
}

export async function rateCommit(ctx: Context, options: RateCommitOptions): Promise<void> {
  if (options.offline !== true)
    throw new UsageError('usage', 'rate commit builds commits with --offline only; to rate online run `loopsign rate --content-id …`');
  required(options, 'runtime', 'voter', 'contentId', 'prediction', 'stake');
  const { offlineCommit } = await import('../rate/offline-commit.js');
  const out = await offlineCommit(ctx, {
    runtime: String(options.runtime),
    voter: String(options.voter),
    contentId: String(options.contentId),
    isUp: direction(options),
    prediction: String(options.prediction),
    stake: String(options.stake),
    salt: options.salt,
    frontend: options.frontend,
  });
  ctx.out.result(out, () => JSON.stringify(out, null, 2));
}

export async function rateStatus(ctx: Context, options: RateLookupOptions): Promise<void> {
  required(options, 'contentId');
  const { rateStatus: status } = await import('../rate/status.js');
  const contentId = String(options.contentId);
  const { service: s, votes } = await status(ctx, contentId);
  ctx.out.result(serviceDocument(s, { contentId, votes }), () =>
    [
      `question ${contentId}: ${String(s.status)}${s.commitHash ? ` (commit ${String(s.commitHash)}, round ${String(s.roundId)})` : ''}`,
      ...votes.map(
        (v) =>
          `  journaled vote, round ${v.roundId}: ${v.state}, commit ${v.commitHash}, stake ${Number(v.stakeWei) / 1e6} LREP, revealable from ${v.revealableAt}${v.setAside ? ' (set aside: another chain instance)' : ''}`,
      ),
    ].join('\n'),
  );
}

export async function rateReveal(ctx: Context, options: RateLookupOptions): Promise<void> {
  required(options, 'contentId');
  const { rateReveal: reveal } = await import('../rate/status.js');
  const r = await reveal(ctx, String(options.contentId));
  ctx.out.result(r, () => `question ${String(r.contentId)}, round ${String(r.roundId)}: revealed (by ${String(r.revealedBy)})`);
}
