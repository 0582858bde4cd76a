// loopsign status | result | quote | templates | confirm
import type { Context } from '../context.js';
import { NotReadyError, UsageError } from '../errors.js';
import { arrayField, isDoc, objectField, type ServiceDoc } from '../service/doc.js';
import { statusAmounts, type AmountView } from '../ask/amounts-view.js';
import * as core from '../ask/lookups.js';
import { timeoutOf } from './timeout.js';
import { renderResult, renderStatus, renderTransactions, toRatersLine } from './render.js';
import type { TxStates } from '../wallet/tx-states.js';
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

// The documents `--json` prints, one function each, which the MCP tools return too (src/mcp/tools/asks.ts).

/**
 * `status --json`: the service's status document with loopsign's checked summary, its amounts in display units (what
 * the ask pays, what reaches raters after the frontend fee), and where each of the ask's journaled transactions
 * stands (`transactions[].state`; `finality`: the chain's block read, null when none was).
 */
export const statusDocument = (s: ServiceDoc, states: TxStates): Record<string, unknown> =>
  serviceDocument(s, { amounts: statusAmounts(s), finality: states.finality, transactions: states.transactions });

/** The ask's status and its transactions' states: `status` and the MCP tool loopsign_status. */
export async function statusOf(ctx: Context, o: core.LookupOptions): Promise<{ s: ServiceDoc; states: TxStates }> {
  const s = await core.status(ctx, o);
  return { s, states: await core.askTransactionStates(ctx, s, o) };
}
/** `result --json`: with the amounts of its ask (from the result's `operation`, none for a result by content alone). */
export const resultDocument = (r: ServiceDoc): Record<string, unknown> =>
  serviceDocument(r, { amounts: statusAmounts(objectField(r, 'operation')) });
/** `templates --json`. */
export const templatesDocument = (t: ServiceDoc): Record<string, unknown> => serviceDocument(t);
/** `confirm --json`. */
export const confirmDocument = (r: ServiceDoc): Record<string, unknown> => serviceDocument(r);

/** `quote --json`: the quote with its amounts in display units beside the atomic ones. */
export async function quoteDocument(q: ServiceDoc): Promise<Record<string, unknown>> {
  const { quoteAmounts } = await import('../ask/amounts-view.js');
  return serviceDocument(q, { amounts: quoteAmounts(q) });
}

export async function status(ctx: Context, options: StatusOptions): Promise<void> {
  const { s, states } = await statusOf(ctx, lookup(options));
  ctx.out.result(statusDocument(s, states), () => [renderStatus(s), ...renderTransactions(states)].join('\n'));
}

export async function result(ctx: Context, options: ResultOptions): Promise<void> {
  const r = await core.result(ctx, lookup(options));
  ctx.out.result(resultDocument(r), () => renderResult(r));
  if (options.requireFinal === true && r.ready !== true) {
    throw new NotReadyError('result_not_final', 'the result is not final yet', { hint: 'wait with --wait, or run again later' });
  }
}

export async function quote(ctx: Context, options: QuoteOptions): Promise<void> {
  const mode = options.paymentMode;
  if (mode !== undefined && mode !== 'wallet_calls' && mode !== 'x402_authorization') {
    throw new UsageError('invalid_payment_mode', `--payment-mode ${mode} must be wallet_calls or x402_authorization`);
  }
  const q = await core.quote(ctx, { file: String(options.file) }, mode);
  const doc = await quoteDocument(q);
  const amounts = doc.amounts as Record<string, AmountView>;
  ctx.out.result(doc, () => {
    const p = objectField(q, 'payment') ?? {};
    const total = amounts.total
      ? `${amounts.total.display} (${amounts.total.atomic} atomic units)`
      : `${String(p.totalAmount ?? p.amount)} ${String(p.asset)} atomic units`;
    const max = amounts.maxPaymentHint
      ? `${amounts.maxPaymentHint.display} (${amounts.maxPaymentHint.atomic})`
      : String(q.maxPaymentAmountHint);
    const toRaters = toRatersLine(amounts);
    return [
      `quote for ${String(q.clientRequestId)}: ${total}, ${String(q.paymentMode)}`,
      `  operation     ${String(q.operationKey)}`,
      `  max payment   ${max}`,
      ...(toRaters ? [toRaters] : []),
      `  can submit    ${String(q.canSubmit)}`,
    ].join('\n');
  });
}

export async function templates(ctx: Context): Promise<void> {
  const t = await core.templates(ctx);
  ctx.out.result(templatesDocument(t), () => renderTemplates(t));
}

/** `templates` for people: one line per template (an entry that is not an object is shown only under --json). */
export function renderTemplates(t: ServiceDoc): string {
  return (arrayField(t, 'templates') ?? [])
    .filter(isDoc)
    .map((x) => {
      const inputs = (arrayField(objectField(x, 'templateInputsSchema'), 'required') ?? []).filter((k) => typeof k === 'string');
      return `${String(x.id).padEnd(28)} ${String(x.title)}${inputs.length ? `  (inputs: ${inputs.join(', ')})` : ''}`;
    })
    .join('\n');
}

export async function confirm(ctx: Context, options: ConfirmOptions): Promise<void> {
  const r = await core.confirm(ctx, String(options.operationKey), options.tx ?? [], options.feedbackBonus === true);
  ctx.out.result(confirmDocument(r), () =>
    options.feedbackBonus === true ? `feedback bonus: ${String(objectField(r, 'feedbackBonus')?.status)}` : renderStatus(r),
  );
}
