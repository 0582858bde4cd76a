// loopsign ask: the whole paid round (docs/ask.md).
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { dryRunAsk, runAsk, type AskOptions as AskRequest, type AskOutcome } from '../ask/flow.js';
import type { AskSource } from '../ask/prepare.js';
import type { AmountView } from '../ask/amounts-view.js';
import type { ServiceDoc } from '../service/doc.js';
import { renderResult, toRatersLine } from './render.js';
import { serviceDocument } from '../output.js';
import type { AskOptions } from './ask.def.js';
import { timeoutOf } from './timeout.js';
import { formatUnits } from '../amounts.js';

export async function ask(ctx: Context, options: AskOptions): Promise<void> {
  const mode = options.paymentMode;
  if (mode !== undefined && mode !== 'wallet_calls' && mode !== 'x402_authorization') {
    throw new UsageError('invalid_payment_mode', `--payment-mode ${mode} must be wallet_calls or x402_authorization`);
  }
  if (options.dryRun === true) {
    const doc = dryRunDocument(await dryRunAsk(ctx, { file: String(options.file), paymentMode: mode, detailsFile: options.detailsFile }));
    const answer = doc.service as ServiceDoc;
    ctx.out.result(
      doc,
      () =>
        `dry run of ${String(answer.clientRequestId)}: ${String(answer.status)}, operation ${String(answer.operationKey)}; no payment, no transaction\nanswer: ${String((answer.result as Record<string, unknown> | undefined)?.answer ?? 'n/a')}`,
    );
    return;
  }
  const request: AskRequest = {
    file: String(options.file),
    paymentMode: mode,
    confirm: options.confirm !== false,
    wait: options.wait === true,
    timeoutSeconds: timeoutOf(options.timeout),
    atomic: options.atomic === true,
    detailsFile: options.detailsFile,
    setAsideStale: options.setAsideStale === true,
    waitFinal: options.waitFinal === true,
    acceptForeignNonces: options.acceptForeignNonces === true,
  };
  const o = await runAsk(ctx, request);
  const doc = askDocument(o, await askAmountsOf(ctx, request));
  const amounts = doc.amounts as Record<string, AmountView>;
  ctx.out.result(doc, () => {
    const paid = [amounts.bounty, amounts.feedbackBonus].filter((a) => a !== undefined).map((a) => `${a!.display} (${a!.atomic})`);
    const lines = [
      `${o.resumed ? 'resumed and finished' : 'asked'} ${o.clientRequestId} (${o.paymentMode}): ${o.status}`,
      `  pays          ${paid.join(' + ') || 'n/a'}${amounts.maxPayment ? `, at most ${amounts.maxPayment.display}` : ''}`,
      ...[toRatersLine(amounts)].filter((l) => l !== undefined),
      `  operation     ${o.operationKey}`,
      `  content       ${o.contentIds.join(', ') || '(not yet)'}`,
      `  transactions  ${o.transactionHashes.join(', ') || '(none)'} (${sentLine(o)})`,
      ...o.budgetPulls.map(
        (p) =>
          `  pulled        ${formatUnits(BigInt(p.amount), 6)} ${p.asset} from the owner's grant (${p.stage}; ${p.transactionHash}, ${p.status})`,
      ),
    ];
    if (o.feedbackBonus)
      lines.push(
        `  bonus         ${String(o.feedbackBonus.status)}${o.feedbackBonus.poolId ? ` (pool ${String(o.feedbackBonus.poolId)})` : ''}`,
      );
    if (o.result) lines.push('', renderResult(o.result));
    if (o.next.length) lines.push('', 'next:', ...o.next.map((n) => `  ${n}`));
    return lines.join('\n');
  });
}

/** "2 sent this run", "0 sent this run, 3 earlier": never an earlier run's transactions counted as this one's. */
function sentLine(o: AskOutcome): string {
  const before = o.transactions - o.sentThisRun;
  return `${o.sentThisRun} sent this run${before > 0 ? `, ${before} earlier` : ''}`;
}

/** What the user's own ask pays, in display units beside the atomic ones (the ask was checked by runAsk). */
export async function askAmountsOf(ctx: Context, source: AskSource): Promise<Record<string, AmountView>> {
  const [{ askAmounts }, { loadAsk }] = await Promise.all([import('../ask/amounts-view.js'), import('../ask/prepare.js')]);
  const config = await ctx.config();
  return askAmounts((await loadAsk(source, config.chainId.value, undefined, config.profile.value)).ask);
}

/**
 * The document `ask --json` prints and `loopsign_ask` returns: the outcome with the ask's amounts. One function for
 * both, so the two cannot drift.
 */
export function askDocument(out: AskOutcome, amounts: Record<string, AmountView>): Record<string, unknown> {
  return { ...out, amounts };
}

/** A dry run's document: the service's answer under `service`, marked as a dry run (nothing was paid). */
export function dryRunDocument(answer: ServiceDoc): Record<string, unknown> {
  return serviceDocument(answer, { dryRun: true });
}
