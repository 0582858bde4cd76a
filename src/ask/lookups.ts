// Read-only lookups and the confirm step for already-sent transactions.
import type { Context } from '../context.js';
import { ServiceError, UsageError } from '../errors.js';
import { findByOperationKey } from '../store/operation.js';
import type { Json } from '../service/client.js';
import { loadAskFile, outgoingBody } from './prepare.js';
import { waitForReady } from './wait.js';

const HASH = /^0x[0-9a-fA-F]{64}$/;

export function checkOperationKey(key: string): string {
  if (!HASH.test(key)) throw new UsageError('invalid_operation_key', `--operation-key ${key} must be 0x followed by 64 hex characters`);
  return key;
}

/** An operationKey the service returned, used only in its exact form (it ends up in hints and commands). */
function serviceOperationKey(doc: Json): string {
  const key = doc.operationKey;
  if (typeof key !== 'string' || !HASH.test(key)) throw new ServiceError('malformed_response', 'the service returned an operationKey that is not 0x + 64 hex');
  return key.toLowerCase();
}

/** The wallet to look things up for: --wallet, else the keystore's address (unlocking only if it has none). */
export async function lookupWallet(ctx: Context, given?: string): Promise<string> {
  if (given !== undefined) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(given)) throw new UsageError('invalid_address', `--wallet ${given} is not an address`);
    return given;
  }
  return ctx.walletAddress();
}

export interface LookupOptions {
  operationKey?: string;
  clientRequestId?: string;
  contentId?: string;
  wallet?: string;
  wait: boolean;
  timeoutSeconds: number;
}

export async function status(ctx: Context, o: LookupOptions): Promise<Json> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  let key = o.operationKey ? checkOperationKey(o.operationKey) : undefined;
  if (!key) {
    if (!o.clientRequestId) throw new UsageError('missing_identifier', 'give --operation-key, or --client-request-id (with the configured chain and wallet)');
    const s = await env.service.statusByClient(env.chain.chain.chainId, o.clientRequestId, await lookupWallet(ctx, o.wallet));
    if (!o.wait || s.status === 'not_found') return s;
    key = serviceOperationKey(s);
  }
  return o.wait ? waitForReady(env.service, key, ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal }) : env.service.status(key);
}

export async function result(ctx: Context, o: LookupOptions): Promise<Json> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  if (o.contentId !== undefined && !/^[1-9][0-9]*$/.test(o.contentId)) throw new UsageError('invalid_content_id', `--content-id ${o.contentId} must be a positive integer`);
  if (o.operationKey) {
    const key = checkOperationKey(o.operationKey);
    if (o.wait) await waitForReady(env.service, key, ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal });
    return env.service.result(key, o.contentId);
  }
  if (o.clientRequestId) {
    const wallet = await lookupWallet(ctx, o.wallet);
    if (o.wait) {
      const s = await env.service.statusByClient(env.chain.chain.chainId, o.clientRequestId, wallet);
      if (s.operationKey !== undefined && s.operationKey !== null) await waitForReady(env.service, serviceOperationKey(s), ctx.out, { timeoutSeconds: o.timeoutSeconds, signal: ctx.signal });
    }
    return env.service.resultByClient(env.chain.chain.chainId, o.clientRequestId, wallet, o.contentId);
  }
  if (o.contentId) return env.service.resultByContent(o.contentId);
  throw new UsageError('missing_identifier', 'give --operation-key, --client-request-id or --content-id');
}

export async function quote(ctx: Context, file: string, paymentMode?: string): Promise<Json> {
  const config = await ctx.config();
  const loaded = await loadAskFile(file, config.chainId.value, undefined, config.profile.value, ctx.clock);
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  const fileWallet = (loaded.body.walletAddress ?? loaded.body.agentWalletAddress) as string | undefined;
  const wallet = fileWallet ?? (await lookupWallet(ctx));
  const mode = paymentMode ?? (loaded.body.paymentMode as string | undefined);
  const body = mode ? outgoingBody(loaded, wallet, mode) : { ...loaded.body, walletAddress: wallet };
  return env.service.quote(body);
}

export async function templates(ctx: Context): Promise<Json> {
  const env = { service: await ctx.service(), chain: await ctx.chainSettings() };
  return env.service.templates();
}

/** Confirm transactions already sent: the given hashes, or the ones the journal recorded. */
export async function confirm(ctx: Context, operationKey: string, txs: string[], feedbackBonus: boolean): Promise<Json> {
  const key = checkOperationKey(operationKey);
  for (const t of txs) if (!HASH.test(t)) throw new UsageError('invalid_tx_hash', `--tx ${t} must be 0x followed by 64 hex characters`);
  const env = { service: await ctx.service({ spends: true }) };
  let hashes = txs;
  if (hashes.length === 0) {
    const journal = findByOperationKey(await ctx.store(), key);
    const stage = feedbackBonus ? 'bonus' : 'ask';
    hashes = (journal?.txs ?? []).filter((t) => t.stage === stage && t.status === 'mined').map((t) => t.hash);
    if (hashes.length === 0) {
      throw new UsageError('no_transactions', `no ${feedbackBonus ? 'feedback bonus ' : ''}transactions for ${key} in the journal`, { hint: 'give them with --tx HASH (in plan order)' });
    }
  }
  return feedbackBonus ? env.service.confirmBonus(key, hashes) : env.service.confirm(key, hashes);
}
