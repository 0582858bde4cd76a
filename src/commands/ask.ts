// loopsign ask: the whole paid round (docs/ask.md).
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { runAsk, type AskOptions as AskRequest, type AskOutcome } from '../ask/flow.js';
import type { AskSource } from '../ask/prepare.js';
import type { AmountView } from '../ask/amounts-view.js';
import type { Json } from '../service/client.js';
import { renderResult } from './render.js';
import { serviceDocument } from '../output.js';
import type { AskOptions } from './ask.def.js';

export function timeoutOf(value: unknown, fallback = 1800): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError('invalid_timeout', `--timeout ${String(value)} must be a positive number of seconds`);
  return n;
}

export async function ask(ctx: Context, options: AskOptions): Promise<void> {
  const mode = options.paymentMode;
  if (mode !== undefined && mode !== 'wallet_calls' && mode !== 'x402_authorization') {
    throw new UsageError('invalid_payment_mode', `--payment-mode ${mode} must be wallet_calls or x402_authorization`);
  }
  const request: AskRequest = {
    file: String(options.file),
    paymentMode: mode,
    dryRun: options.dryRun === true,
    confirm: options.confirm !== false,
    wait: options.wait === true,
    timeoutSeconds: timeoutOf(options.timeout),
    atomic: options.atomic === true,
    detailsFile: options.detailsFile,
    setAsideStale: options.setAsideStale === true,
  };
  const out = await runAsk(ctx, request);
  const doc = askDocument(out, request, request.dryRun ? {} : await askAmountsOf(ctx, request));
  if (request.dryRun) {
    ctx.out.result(doc, () => `dry run of ${String(out.clientRequestId)}: ${String(out.status)}, operation ${String(out.operationKey)}; no payment, no transaction\nanswer: ${String((out.result as Record<string, unknown> | undefined)?.answer ?? 'n/a')}`);
    return;
  }
  const o = out as AskOutcome;
  const amounts = doc.amounts as Record<string, AmountView>;
  ctx.out.result(doc, () => {
    const paid = [amounts.bounty, amounts.feedbackBonus].filter((a) => a !== undefined).map((a) => `${a!.display} (${a!.atomic})`);
    const lines = [
      `${o.resumed ? 'resumed and finished' : 'asked'} ${o.clientRequestId} (${o.paymentMode}): ${o.status}`,
      `  pays          ${paid.join(' + ') || 'n/a'}${amounts.maxPayment ? `, at most ${amounts.maxPayment.display}` : ''}`,
      `  operation     ${o.operationKey}`,
      `  content       ${o.contentIds.join(', ') || '(not yet)'}`,
      `  transactions  ${o.transactionHashes.join(', ')}${o.transactions ? ` (${o.transactions} sent this run)` : ''}`,
    ];
    if (o.feedbackBonus) lines.push(`  bonus         ${String(o.feedbackBonus.status)}${o.feedbackBonus.poolId ? ` (pool ${String(o.feedbackBonus.poolId)})` : ''}`);
    if (o.result) lines.push('', renderResult(o.result));
    if (o.next.length) lines.push('', 'next:', ...o.next.map((n) => `  ${n}`));
    return lines.join('\n');
  });
}

/** What the user's own ask pays, in display units beside the atomic ones (the ask was checked by runAsk). */
export async function askAmountsOf(ctx: Context, source: AskSource): Promise<Record<string, AmountView>> {
  const [{ askAmounts }, { loadAsk }] = await Promise.all([import('../ask/amounts-view.js'), import('../ask/prepare.js')]);
  const config = await ctx.config();
  return askAmounts((await loadAsk(source, config.chainId.value, undefined, config.profile.value)).ask);
}

/**
 * The document `ask --json` prints and `loopsign_ask` returns: a dry run's service document, or the outcome with the
 * ask's amounts. One function for both, so the two cannot drift.
 */
export function askDocument(out: AskOutcome | Json, request: Pick<AskRequest, 'dryRun'>, amounts: Record<string, AmountView>): Record<string, unknown> {
  if (request.dryRun) return serviceDocument(out, { dryRun: true });
  return { ...(out as unknown as Record<string, unknown>), amounts };
}
