// loopsign ask: the whole paid round (docs/ask.md).
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { runAsk, type AskOutcome } from '../ask/flow.js';
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
  const out = await runAsk(ctx, {
    file: String(options.file),
    paymentMode: mode as 'wallet_calls' | 'x402_authorization' | undefined,
    dryRun: options.dryRun === true,
    confirm: options.confirm !== false,
    wait: options.wait === true,
    timeoutSeconds: timeoutOf(options.timeout),
    atomic: options.atomic === true,
    detailsFile: options.detailsFile,
    setAsideStale: options.setAsideStale === true,
  });
  if (options.dryRun === true) {
    ctx.out.result(serviceDocument(out, { dryRun: true }), () => `dry run of ${String(out.clientRequestId)}: ${String(out.status)}, operation ${String(out.operationKey)}; no payment, no transaction\nanswer: ${String((out.result as Record<string, unknown> | undefined)?.answer ?? 'n/a')}`);
    return;
  }
  const o = out as AskOutcome;
  // What the user's own file pays, in display units beside the atomic ones (the file was checked by runAsk).
  const { askAmounts } = await import('../ask/amounts-view.js');
  const { loadAskFile } = await import('../ask/prepare.js');
  const config = await ctx.config();
  const amounts = askAmounts((await loadAskFile(String(options.file), config.chainId.value, undefined, config.profile.value)).ask);
  ctx.out.result({ ...(o as unknown as Record<string, unknown>), amounts }, () => {
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
