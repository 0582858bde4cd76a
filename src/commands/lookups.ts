// loopsign status | result | quote | templates | confirm
import type { Context } from '../context.js';
import { NotReadyError } from '../errors.js';
import * as core from '../ask/lookups.js';
import { timeoutOf } from './ask.js';
import { renderResult, renderStatus } from './render.js';
import { serviceDocument } from '../output.js';
import type { ConfirmOptions, QuoteOptions, ResultOptions, StatusOptions } from './lookups.def.js';

function lookup(options: StatusOptions & { contentId?: string }): core.LookupOptions {
  return {
    operationKey: options.operationKey,
    clientRequestId: options.clientRequestId,
    contentId: options.contentId,
    wallet: options.wallet,
    wait: options.wait === true,
    timeoutSeconds: timeoutOf(options.timeout, 600),
  };
}

export async function status(ctx: Context, options: StatusOptions): Promise<void> {
  const s = await core.status(ctx, lookup(options));
  ctx.out.result(serviceDocument(s), () => renderStatus(s));
}

export async function result(ctx: Context, options: ResultOptions): Promise<void> {
  const r = await core.result(ctx, lookup(options));
  ctx.out.result(serviceDocument(r), () => renderResult(r));
  if (options.requireFinal === true && r.ready !== true) {
    throw new NotReadyError('result_not_final', 'the result is not final yet', { hint: 'wait with --wait, or run again later' });
  }
}

export async function quote(ctx: Context, options: QuoteOptions): Promise<void> {
  const q = await core.quote(ctx, String(options.file), options.paymentMode);
  const { quoteAmounts } = await import('../ask/amounts-view.js');
  const amounts = quoteAmounts(q);
  ctx.out.result(serviceDocument(q, { amounts }), () => {
    const p = (q.payment ?? {}) as Record<string, unknown>;
    const total = amounts.total ? `${amounts.total.display} (${amounts.total.atomic} atomic units)` : `${String(p.totalAmount ?? p.amount)} ${String(p.asset)} atomic units`;
    const max = amounts.maxPaymentHint ? `${amounts.maxPaymentHint.display} (${amounts.maxPaymentHint.atomic})` : String(q.maxPaymentAmountHint);
    return [
      `quote for ${String(q.clientRequestId)}: ${total}, ${String(q.paymentMode)}`,
      `  operation     ${String(q.operationKey)}`,
      `  max payment   ${max}`,
      `  can submit    ${String(q.canSubmit)}`,
    ].join('\n');
  });
}

export async function templates(ctx: Context): Promise<void> {
  const t = await core.templates(ctx);
  ctx.out.result(serviceDocument(t), () =>
    ((t.templates as Record<string, unknown>[]) ?? []).map((x) => `${String(x.id).padEnd(28)} ${String(x.title)}${(x.templateInputsSchema as { required?: string[] })?.required?.length ? `  (inputs: ${(x.templateInputsSchema as { required: string[] }).required.join(', ')})` : ''}`).join('\n'),
  );
}

export async function confirm(ctx: Context, options: ConfirmOptions): Promise<void> {
  const r = await core.confirm(ctx, String(options.operationKey), options.tx ?? [], options.feedbackBonus === true);
  ctx.out.result(serviceDocument(r), () => (options.feedbackBonus === true ? `feedback bonus: ${String((r.feedbackBonus as Record<string, unknown>)?.status)}` : renderStatus(r)));
}
