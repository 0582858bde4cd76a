// Read-only lookups and the confirm step for already-sent transactions.
import type { Context } from '../context.js';
import { ServiceError, UsageError } from '../errors.js';
import { objectField, type ServiceDoc } from '../service/doc.js';
import { loadAsk, outgoingBody, type AskSource } from './prepare.js';
import type { PaymentMode } from '../protocol/ask-normalize.js';
import { waitForReady } from './wait.js';
import type { ServiceClient } from '../service/client.js';
import { checkAddress } from '../address.js';
import type { TxStates } from '../wallet/tx-states.js';

const HASH = /^0x[0-9a-fA-F]{64}$/;

export function checkOperationKey(key: string): string {
  if (!HASH.test(key)) throw new UsageError('invalid_operation_key', `--operation-key ${key} must be 0x followed by 64 hex characters`);
  return key;
}

/** An operationKey the service returned, used only in its exact form (it ends up in hints and commands). */
function serviceOperationKey(doc: ServiceDoc): string {
  const key = doc.operationKey;
  if (typeof key !== 'string' || !HASH.test(key))
    throw new ServiceError('malformed_response', 'the service returned an operationKey that is not 0x + 64 hex');
  return key.toLowerCase();
}

/** The wallet to look things up for: --wallet, else the keystore's address (unlocking only if it has none). */
export async function lookupWallet(ctx: Context, given?: string): Promise<string> {
  if (given !== undefined) {
    return checkAddress(given, '--wallet');
  }
  return ctx.walletAddress();
}

/**
 * The service answers an unknown operation with a `not_found` document (HTTP 200), not an error. To a script that is
 * not a result: a mistyped key or id is refused (exit 2) with what to check.
 */
function unlessNotFound(doc: ServiceDoc, o: LookupOptions, wallet?: string, chainId?: number): ServiceDoc {
  if (doc.status !== 'not_found' && doc.answer !== 'not_found' && objectField(doc, 'operation')?.status !== 'not_found') return doc;
  if (o.operationKey) {
    throw new UsageError('unknown_operation', `the service knows no ask with operation key ${o.operationKey.toLowerCase()} (not_found)`, {
      hint: 'check the key (copy it from the output of `loopsign ask`), or look the ask up with --client-request-id',
      details: { operationKey: o.operationKey.toLowerCase() },
    });
  }
  throw new UsageError(
    'unknown_operation',
    `the service knows no ask with clientRequestId ${JSON.stringify(o.clientRequestId)} from wallet ${wallet} on chain ${chainId} (not_found)`,
    {
      hint: 'check the id, the asking wallet (--wallet) and the chain (--chain-id); an ask that failed before the service recorded it has no status',
      details: { clientRequestId: o.clientRequestId, wallet, chainId },
    },
  );
}

export interface LookupOptions {
  operationKey?: string;
  clientRequestId?: string;
  contentId?: string;
  wallet?: string;
  wait: boolean;
  timeoutSeconds: number;
}

// The lookups return the service's documents as they came (ServiceDoc): the commands print them under `service`,
// unread, beside loopsign's own checked summary (src/commands/lookups.ts).

export async function status(ctx: Context, o: LookupOptions): Promise<ServiceDoc> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  let key = o.operationKey ? checkOperationKey(o.operationKey) : undefined;
  if (!key) {
    if (!o.clientRequestId)
      throw new UsageError('missing_identifier', 'give --operation-key, or --client-request-id (with the configured chain and wallet)');
    const wallet = await lookupWallet(ctx, o.wallet);
    const s = unlessNotFound(
      await env.service.statusByClient(env.chain.chain.chainId, o.clientRequestId, wallet),
      o,
      wallet,
      env.chain.chain.chainId,
    );
    if (!o.wait) return s;
    key = serviceOperationKey(s);
  }
  if (!o.wait) return unlessNotFound(await env.service.status(key), o);
  // An unknown key is refused before waiting on it (the service's not_found is terminal).
  if (o.operationKey) unlessNotFound(await env.service.status(key), o);
  return waitForReady(env.service, key, ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal });
}

/**
 * Where the ask's transactions stand (issue 35), from this database's journal of it: the ask the service's status
 * names (its operationKey), else the one of this clientRequestId, chain and wallet. None when this database has no
 * journal of it (an ask made elsewhere; a machine that never signed gets no database for a lookup), and no chain
 * read unless the journal saw one mined (src/wallet/tx-states.ts).
 */
export async function askTransactionStates(ctx: Context, s: ServiceDoc, o: LookupOptions): Promise<TxStates> {
  const none: TxStates = { finality: null, transactions: [] };
  const [{ existsSync }, path, { STORE_FILE }] = await Promise.all([import('node:fs'), import('node:path'), import('../store/db.js')]);
  if (!existsSync(path.join(ctx.paths.state, STORE_FILE))) return none;
  const [{ findByOperationKey, operationId, readOperation }, { transactionStates }] = await Promise.all([
    import('../store/operation.js'),
    import('../wallet/tx-states.js'),
  ]);
  const store = await ctx.store();
  const chain = (await ctx.chainSettings()).chain;
  const key = typeof s.operationKey === 'string' && HASH.test(s.operationKey) ? s.operationKey : o.operationKey;
  let journal = key ? findByOperationKey(store, key) : undefined;
  if (!journal && o.clientRequestId) {
    const wallet = (await lookupWallet(ctx, o.wallet)).toLowerCase();
    journal = readOperation(store, 'ask', operationId('ask', [chain.chainId, wallet, o.clientRequestId]));
  }
  if (!journal) return none;
  const connect = async () => {
    if (journal.chainId !== chain.chainId)
      throw new Error(
        `the ask is on chain ${journal.chainId}, not the configured chain ${chain.chainId} (give --chain-id ${journal.chainId})`,
      );
    return (await ctx.chain()).client;
  };
  return transactionStates(connect, chain, journal.txs);
}

export async function result(ctx: Context, o: LookupOptions): Promise<ServiceDoc> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  if (o.contentId !== undefined && !/^[1-9][0-9]*$/.test(o.contentId))
    throw new UsageError('invalid_content_id', `--content-id ${o.contentId} must be a positive integer`);
  if (o.operationKey) {
    const key = checkOperationKey(o.operationKey);
    if (o.wait) {
      unlessNotFound(await env.service.status(key), o);
      await waitForReady(env.service, key, ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal });
    }
    return unlessNotFound(await env.service.result(key, o.contentId), o);
  }
  if (o.clientRequestId) {
    const wallet = await lookupWallet(ctx, o.wallet);
    const chainId = env.chain.chain.chainId;
    if (o.wait) {
      const s = unlessNotFound(await env.service.statusByClient(chainId, o.clientRequestId, wallet), o, wallet, chainId);
      if (s.operationKey !== undefined && s.operationKey !== null)
        await waitForReady(env.service, serviceOperationKey(s), ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal });
    }
    return unlessNotFound(await env.service.resultByClient(chainId, o.clientRequestId, wallet, o.contentId), o, wallet, chainId);
  }
  if (o.contentId) return resultByContent(env.service, o.contentId);
  throw new UsageError('missing_identifier', 'give --operation-key, --client-request-id or --content-id');
}

/**
 * A question's result by its content id. The live service reads it from its indexer, which answers a question it
 * does not know with 404 (the route's `invalid_arguments`, HTTP 404): that is "no such question", said so (exit 3),
 * never a pending result to wait on.
 */
async function resultByContent(service: ServiceClient, contentId: string): Promise<ServiceDoc> {
  try {
    return await service.resultByContent(contentId);
  } catch (error) {
    if (error instanceof ServiceError && error.details?.status === 404)
      throw new ServiceError(error.code, `the service knows no question with content id ${contentId} (HTTP 404: ${error.message})`, {
        hint: 'check the content id (`loopsign ask` prints it as content), or look the ask up with --operation-key',
        details: { ...error.details, contentId },
      });
    throw error;
  }
}

/** The service's quote for an ask (a file, or inline), checked locally first exactly as `ask` checks it. */
export async function quote(ctx: Context, source: AskSource, paymentMode?: PaymentMode): Promise<ServiceDoc> {
  const config = await ctx.config();
  const loaded = await loadAsk(source, config.chainId.value, undefined, config.profile.value, ctx.clock);
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  const fileWallet = (loaded.body.walletAddress ?? loaded.body.agentWalletAddress) as string | undefined;
  const wallet = fileWallet ?? (await lookupWallet(ctx));
  const mode = paymentMode ?? (loaded.body.paymentMode as string | undefined);
  const body = mode ? outgoingBody(loaded, wallet, mode) : { ...loaded.body, walletAddress: wallet };
  return env.service.quote(body);
}

export async function templates(ctx: Context): Promise<ServiceDoc> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  return env.service.templates();
}

/** Confirm transactions already sent: the given hashes, or the ones the journal recorded. */
export async function confirm(ctx: Context, operationKey: string, txs: string[], feedbackBonus: boolean): Promise<ServiceDoc> {
  const key = checkOperationKey(operationKey);
  for (const t of txs) if (!HASH.test(t)) throw new UsageError('invalid_tx_hash', `--tx ${t} must be 0x followed by 64 hex characters`);
  const env = { service: await ctx.service({ spends: true }) };
  let hashes = txs;
  if (hashes.length === 0) {
    // Only confirm reads the journal: status, result and quote do not load the store's modules.
    const { findByOperationKey } = await import('../store/operation.js');
    const journal = findByOperationKey(await ctx.store(), key);
    const stage = feedbackBonus ? 'bonus' : 'ask';
    hashes = (journal?.txs ?? []).filter((t) => t.stage === stage && t.status === 'mined').map((t) => t.hash);
    if (hashes.length === 0) {
      throw new UsageError('no_transactions', `no ${feedbackBonus ? 'feedback bonus ' : ''}transactions for ${key} in the journal`, {
        hint: 'give them with --tx HASH (in plan order)',
      });
    }
  }
  return feedbackBonus ? env.service.confirmBonus(key, hashes) : env.service.confirm(key, hashes);
}
