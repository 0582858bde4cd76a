// loopsign history (docs/commands/history.md): spending from the database, or one operation's journal.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import type { HistoryOptions } from './history.def.js';
import type { TxRecord } from '../store/records.js';
import type { ChainConfig } from '../chains/table.js';
import type { FinalityView, TxStateView } from '../wallet/tx-states.js';
import { renderTransactions } from './render.js';

const UNITS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `--since`: a date or time (ISO 8601), or a span back from now (24h, 7d, 4w). */
export function parseSince(value: string, now = new Date()): Date {
  const span = /^([1-9][0-9]{0,5})([hdw])$/.exec(value);
  if (span) return new Date(now.getTime() - Number(span[1]) * UNITS[span[2]!]!);
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    const at = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new UsageError('invalid_since', `--since ${value} is neither a date (2026-11-01) nor a span (24h, 7d, 4w)`, {
    hint: 'e.g. --since 7d for the last week',
  });
}

export async function history(ctx: Context, options: HistoryOptions): Promise<void> {
  if (options.csv && ctx.out.json) throw new UsageError('usage', '--csv and --json each choose what stdout carries: give one of them');
  if (options.operation !== undefined) return operation(ctx, options.operation);
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const chainId = options.allChains ? undefined : (await ctx.config()).chainId.value;
  const { spendHistory, historyCsv, journaledTransactions } = await import('../store/history.js');
  const store = await ctx.store();
  const { labelBySession } = await import('../budget/history-labels.js');
  const { recordedGrants } = await import('../budget/records.js');
  const owner = options.owner === undefined ? undefined : (await import('../address.js')).checkAddress(options.owner, '--owner');
  const h = labelBySession(spendHistory(store, { since, chainId }), await recordedGrants(ctx.paths.state, { skipInvalid: true }), owner);
  // CSV is the spend rows alone: no chain read for an export.
  if (options.csv) return ctx.out.result(h as unknown as Record<string, unknown>, () => historyCsv(h));
  const states = await historyTransactionStates(
    ctx,
    journaledTransactions(
      store,
      h.rows.map((r) => r.operation),
    ),
  );
  ctx.out.result({ ...h, ...states } as unknown as Record<string, unknown>, () => {
    if (h.rows.length === 0)
      return `nothing spent${h.since ? ` since ${h.since}` : ''}${chainId !== undefined ? ` on chain ${chainId}` : ''}${owner ? ` by a session address with a grant from ${owner}` : ''}`;
    const byOperation = new Map<string, TxStateView[]>();
    for (const t of states.transactions) byOperation.set(t.operation, [...(byOperation.get(t.operation) ?? []), t]);
    return [
      ...(h.owner ? [`session addresses with a grant from ${h.owner.address}: ${h.owner.sessions.join(', ') || '(none)'}`] : []),
      ...h.rows.map(
        (r) =>
          `${r.day}  chain ${r.chainId}  ${r.display.padStart(16)}  ${r.kind.padEnd(6)} ${r.operation}  ${r.wallet}${r.paidBy ? `  paid by ${r.paidBy.session}, grant of ${r.paidBy.owner}` : ''}`,
      ),
      ...(byOperation.size ? ['', 'transactions'] : []),
      ...[...byOperation].flatMap(([operation, txs]) =>
        renderTransactions({ finality: states.finality, transactions: txs }, '  ').map((line, i) => (i === 0 ? `  ${operation}` : line)),
      ),
      '',
      ...h.totals.map((t) => `total on chain ${t.chainId}${h.owner ? ` across the sessions of ${h.owner.address}` : ''}: ${t.display}`),
      ...h.windows.map((w) => `${w.window} on chain ${w.chainId} (every wallet, as the policy counts): ${w.display}`),
    ].join('\n');
  });
}

/**
 * Where each transaction stands (src/wallet/tx-states.ts): the configured chain read once for all of them; one on
 * another chain (--all-chains) is unknown unless the journal alone tells (open, void, …).
 */
export async function historyTransactionStates(
  ctx: Context,
  txs: { operation: string; chainId: number; tx: TxRecord }[],
): Promise<{ finality: FinalityView | null; transactions: (TxStateView & { operation: string })[] }> {
  const { transactionStates, labelTransactions } = await import('../wallet/tx-states.js');
  const journalOnly = (unknown?: string) => ({
    finality: null,
    transactions: txs.map((t) => ({
      operation: t.operation,
      ...labelTransactions([t.tx], unknown === undefined ? undefined : { unknown })[0]!,
    })),
  });
  // Nothing seen mined: the journal alone tells (no chain settings resolved, no read).
  if (!txs.some((t) => t.tx.status === 'mined')) return journalOnly();
  let chain: ChainConfig;
  try {
    chain = (await ctx.chainSettings()).chain;
  } catch (error) {
    return journalOnly(`the configured chain could not be resolved (${(error as Error).message.split('\n')[0]})`);
  }
  const here = txs.filter((t) => t.chainId === chain.chainId);
  const read = await transactionStates(
    async () => (await ctx.chain()).client,
    chain,
    here.map((t) => t.tx),
  );
  const labelled = new Map(here.map((t, i) => [t, read.transactions[i]!]));
  return {
    finality: read.finality,
    transactions: txs.map((t) => ({
      operation: t.operation,
      ...(labelled.get(t) ??
        labelTransactions([t.tx], {
          unknown: `it is on chain ${t.chainId}; history reads the configured chain ${chain.chainId} (--chain-id ${t.chainId})`,
        })[0]!),
    })),
  };
}

async function operation(ctx: Context, id: string): Promise<void> {
  if (!/^[a-z][a-z0-9-]*-[0-9a-f]{32}(~[a-z0-9-]+)?$/.test(id))
    throw new UsageError('invalid_operation', `--operation ${id} is not an operation id (kind-<32 hex>, as loopsign prints it)`);
  const { operationView } = await import('../store/view.js');
  const found = operationView(await ctx.store(), id);
  if (!found)
    throw new UsageError('unknown_operation', `no operation ${id} in loopsign's database`, {
      hint: 'operation ids are printed by the command that made them (its `operation` field); `loopsign history` lists those that spent',
    });
  const { view, chainId, txs } = found;
  const states = await historyTransactionStates(
    ctx,
    txs.map((tx) => ({ operation: id, chainId, tx })),
  );
  const { paidByOf } = await import('../budget/history-labels.js');
  const { recordedGrants } = await import('../budget/records.js');
  const paidBy = paidByOf(chainId, String(view.wallet), await recordedGrants(ctx.paths.state, { skipInvalid: true }));
  const doc = {
    ...view,
    ...(paidBy ? { paidBy } : {}),
    finality: states.finality,
    transactions: view.transactions.map((t, i) => {
      const { state, blockNumber, confirmations, finalAtBlock, reason } = states.transactions[i]!;
      return { ...t, state, blockNumber, confirmations, finalAtBlock, ...(reason === undefined ? {} : { reason }) };
    }),
  };
  ctx.out.result(doc, () => JSON.stringify(doc, null, 2));
}
