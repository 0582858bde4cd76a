// loopsign check-plan: the signing path's guards, offline, for a service answer obtained elsewhere (docs/commands/check-plan.md).
import type { Context } from '../context.js';
import { RefusedError, UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import type { CheckPlanInput, CheckPlanResult } from '../ask/check-plan.js';
import type { CheckPlanOptions } from './check-plan.def.js';
import { checkAddress } from '../address.js';

/** What is checked: the ask and the answer as JSON values (read from files, or given inline to the MCP tool). */
export type CheckPlanRequest = Omit<CheckPlanInput, 'chain' | 'now'> & {
  /** Unix seconds; default: now. */
  now?: number;
};

export async function checkPlan(ctx: Context, options: CheckPlanOptions): Promise<void> {
  let now: number | undefined;
  if (options.now !== undefined) {
    if (!/^\d{1,12}$/.test(String(options.now)))
      throw new UsageError('invalid_now', `--now ${String(options.now)} must be a unix time in seconds`);
    now = Number(options.now);
  }
  if (options.wallet !== undefined) checkAddress(options.wallet, '--wallet', 'invalid_wallet');
  const [ask, response, templates] = await Promise.all([
    readUserJson(options.ask, 'ask file', 60 * 1024 * 1024),
    readUserJson(options.response, 'answer file', 60 * 1024 * 1024),
    options.templates === undefined ? undefined : readUserJson(options.templates, 'templates file'),
  ]);
  const { doc, result } = await checkPlanDocument(ctx, { ask, response, templates, wallet: options.wallet, now });
  ctx.out.result(doc, () =>
    [
      `${result.kind.replace('_', ' ')} for wallet ${result.wallet} on chain ${result.chainId}: every check passed${result.calls ? ` (${result.calls} call${result.calls === 1 ? '' : 's'})` : ''}`,
      ...(result.operationKey ? [`  operation  ${result.operationKey}`] : []),
      ...result.translations.map((t) => `  ${t.action} ${t.field}: ${t.note}`),
      ...result.checks.map((c) => `  ok  ${c.name}: ${c.detail}`),
      ...result.needsChain.map((n) => `  not checked offline (needs the chain): ${n}`),
    ].join('\n'),
  );
}

/**
 * The check and the document `check-plan --json` prints (and `loopsign_check_plan` returns); a failed check is the
 * refusal (exit 5) both give. One function for both, so the two cannot drift.
 */
export async function checkPlanDocument(
  ctx: Context,
  request: CheckPlanRequest,
): Promise<{ doc: Record<string, unknown>; result: CheckPlanResult }> {
  const [{ checkPlan: run }, { assertPaidRoundDeployment, resolveChain }] = await Promise.all([
    import('../ask/check-plan.js'),
    import('../chains/index.js'),
  ]);
  const config = await ctx.config();
  const resolved = await resolveChain(config, ctx.env, ctx.paths);
  assertPaidRoundDeployment(resolved.chain);
  if (request.wallet !== undefined) checkAddress(request.wallet, '--wallet', 'invalid_wallet');
  const result = await run({ ...request, chain: resolved.chain, now: request.now ?? Math.floor(Date.now() / 1000) });
  const failed = result.checks.filter((c) => !c.ok);
  if (failed.length > 0) {
    throw new RefusedError('plan_refused', `refused: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ')}`, {
      hint: 'this answer must not be signed: it does not carry exactly what the ask file asks for, on the trusted contracts',
      details: { kind: result.kind, checks: result.checks, needsChain: result.needsChain },
    });
  }
  return { doc: { ...result, profile: resolved.chain.profile ?? null }, result };
}
