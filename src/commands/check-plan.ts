// loopsign check-plan: the signing path's guards, offline, for a service answer obtained elsewhere (docs/commands/check-plan.md).
import type { Context } from '../context.js';
import { RefusedError, UsageError } from '../errors.js';
import { readUserJson } from '../fsutil.js';
import type { CheckPlanOptions } from './check-plan.def.js';
import { checkAddress } from '../address.js';

export async function checkPlan(ctx: Context, options: CheckPlanOptions): Promise<void> {
  const [{ checkPlan: run }, { assertPaidRoundDeployment, resolveChain }] = await Promise.all([import('../ask/check-plan.js'), import('../chains/index.js')]);
  const config = await ctx.config();
  const resolved = await resolveChain(config);
  assertPaidRoundDeployment(resolved.chain);
  let now = Math.floor(Date.now() / 1000);
  if (options.now !== undefined) {
    if (!/^\d{1,12}$/.test(String(options.now))) throw new UsageError('invalid_now', `--now ${String(options.now)} must be a unix time in seconds`);
    now = Number(options.now);
  }
  const wallet = options.wallet;
  if (wallet !== undefined) checkAddress(wallet, '--wallet', 'invalid_wallet');
  const [ask, response, templates] = await Promise.all([
    readUserJson(options.ask, 'ask file', 60 * 1024 * 1024),
    readUserJson(options.response, 'answer file', 60 * 1024 * 1024),
    options.templates === undefined ? undefined : readUserJson(options.templates, 'templates file'),
  ]);
  const result = await run({ ask, response, chain: resolved.chain, wallet, now, templates });
  const failed = result.checks.filter((c) => !c.ok);
  if (failed.length > 0) {
    throw new RefusedError('plan_refused', `refused: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ')}`, {
      hint: 'this answer must not be signed: it does not carry exactly what the ask file asks for, on the trusted contracts',
      details: { kind: result.kind, checks: result.checks, needsChain: result.needsChain },
    });
  }
  ctx.out.result({ ...result, profile: resolved.chain.profile ?? null }, () =>
    [
      `${result.kind.replace('_', ' ')} for wallet ${result.wallet} on chain ${result.chainId}: every check passed${result.calls ? ` (${result.calls} call${result.calls === 1 ? '' : 's'})` : ''}`,
      ...(result.operationKey ? [`  operation  ${result.operationKey}`] : []),
      ...result.translations.map((t) => `  ${t.action} ${t.field}: ${t.note}`),
      ...result.checks.map((c) => `  ok  ${c.name}: ${c.detail}`),
      ...result.needsChain.map((n) => `  not checked offline (needs the chain): ${n}`),
    ].join('\n'),
  );
}
