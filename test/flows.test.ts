// The money flows in-process (issue 21): runAsk and runRate called directly, every effect from the test's Context —
// a fresh funded key as the wallet, a store of its own, a fixed clock, and where a case needs it a chain client that
// drops a broadcast or a service that lies (the in-process sandbox's hostile scenarios). What moved is read from the
// chain; what was signed, from the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, custom, erc20Abi, http, type Hex, type LocalAccount, type PublicClient } from 'viem';
import { startInProcess, type InProcess } from './helpers/in-process.js';
import { runAsk, type AskOptions, type AskOutcome } from '../src/ask/flow.js';
import { runRate } from '../src/rate/flow.js';
import { readOperation } from '../src/store/operation.js';
import { resolveChain } from '../src/chains/index.js';
import type { Context } from '../src/context.js';

let env: InProcess;
let pub: PublicClient;
let n = 0;
const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-flows-'));

beforeAll(async () => {
  env = await startInProcess();
  pub = createPublicClient({ transport: http(env.sb.manifest.rpcUrl), pollingInterval: 50 }) as PublicClient;
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

const usdc = (a: LocalAccount) =>
  pub.readContract({ address: env.sb.manifest.tokens.USDC.address as Hex, abi: erc20Abi, functionName: 'balanceOf', args: [a.address] });

function askFile(extra: Record<string, unknown> = {}): string {
  n++;
  const file = path.join(dir, `ask-${n}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `flows-${process.pid}-${n}`,
      maxPaymentAmount: '2500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      feedbackBonus: { amount: '1000000', asset: 'USDC' },
      question: { title: `In-process ${n}`, contextUrl: 'https://example.com/flows', categoryId: '1', tags: ['flows'] },
      ...extra,
    }),
  );
  return file;
}

const ask = (ctx: Context, file: string, o: Partial<AskOptions> = {}) =>
  runAsk(ctx, {
    file,
    paymentMode: 'wallet_calls',
    dryRun: false,
    confirm: true,
    wait: false,
    timeoutSeconds: 60,
    atomic: false,
    ...o,
  }) as Promise<AskOutcome>;

/** A client on the sandbox's anvil whose first eth_sendRawTransaction never reaches the node (a dropped request). */
async function droppingClient(): Promise<{ client: PublicClient; dropped: () => number }> {
  const base = http(env.sb.manifest.rpcUrl)({ retryCount: 0 });
  let dropped = 0;
  const client = createPublicClient({
    pollingInterval: 50,
    transport: custom({
      request: async ({ method, params }) => {
        if (method === 'eth_sendRawTransaction' && dropped === 0) {
          dropped++;
          throw new Error('connection reset before the node read the request');
        }
        return base.request({ method, params } as never);
      },
    }),
  }) as PublicClient;
  return { client, dropped: () => dropped };
}

describe('an ask from the Context', () => {
  it('with a bonus: submitted, the bonus funded, exactly bounty + bonus paid; every transaction in the store', async () => {
    const account = await env.fundedAccount();
    const ctx = env.context(account);
    const before = await usdc(account);
    const r = await ask(ctx, askFile());
    expect(r).toMatchObject({ status: 'submitted', paymentMode: 'wallet_calls', resumed: false });
    expect(r.feedbackBonus).toMatchObject({ status: 'funded', amount: '1000000' });
    expect(before - (await usdc(account))).toBe(2_500_000n);
    const op = readOperation(await ctx.store(), 'ask', r.operation)!;
    expect(op.step).toBe('done');
    expect(op.txs.map((t) => [t.stage, t.status])).toEqual(op.txs.map((t) => [t.stage, 'mined']));
    expect(op.txs.filter((t) => t.stage === 'bonus').length).toBeGreaterThan(0);
  });

  it('resume: a signed transaction that never reached the node is sent again byte for byte, and nothing is paid twice', async () => {
    const account = await env.fundedAccount();
    const store = (await import('../src/store/db.js')).Store.open(mkdtempSync(path.join(dir, 'shared-')));
    const settings = await resolveChain(await env.context(account).config(), env.env, env.paths);
    const { client, dropped } = await droppingClient();
    const file = askFile({ feedbackBonus: undefined, maxPaymentAmount: '1500000' });
    const before = await usdc(account);
    const first = env.context(account, { store: () => store, chain: async () => ({ settings, client }) });
    const error = await ask(first, file).catch((e) => e);
    expect(error).toMatchObject({ code: 'broadcast_failed', exitCode: 4 });
    expect(dropped()).toBe(1);
    const recorded = readOperation(await store, 'ask', operationOf(await first.store(), file))!.txs;
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.status).toBe('signed');
    expect(await pub.getTransaction({ hash: recorded[0]!.hash }).catch(() => undefined)).toBeUndefined();

    const again = await ask(env.context(account, { store: () => store }), file);
    expect(again).toMatchObject({ status: 'submitted', resumed: true });
    const op = readOperation(await store, 'ask', again.operation)!;
    // The first transaction is the one signed before the drop: the same bytes, now mined.
    expect(op.txs[0]).toMatchObject({ hash: recorded[0]!.hash, raw: recorded[0]!.raw, status: 'mined' });
    expect(before - (await usdc(account))).toBe(1_500_000n);
  });

  it('x402: the authorization is recorded before it leaves; redeemed by someone else, the ask is proven paid by its nonce and this wallet sends nothing', async () => {
    const account = await env.fundedAccount();
    const ctx = env.context(account);
    await env.control('/__sandbox/hostile', { scenario: 'x402_relayed' });
    const nonce = await pub.getTransactionCount({ address: account.address });
    const before = await usdc(account);
    const r = await ask(ctx, askFile({ feedbackBonus: undefined, maxPaymentAmount: '1500000' }), { paymentMode: 'x402_authorization' });
    expect(r).toMatchObject({ status: 'submitted', paymentMode: 'x402_authorization' });
    expect(await pub.getTransactionCount({ address: account.address })).toBe(nonce);
    expect(before - (await usdc(account))).toBe(1_500_000n);
    const op = readOperation(await ctx.store(), 'ask', r.operation)!;
    expect(op.authorizations).toHaveLength(1);
    expect(op.authorizations[0]!.message).toMatchObject({ from: account.address.toLowerCase(), value: '1500000' });
    expect(op.txs).toHaveLength(0);
    expect(env.events(ctx).join('\n')).toMatch(/already redeemed on chain by a transaction this wallet did not send/);
  });

  it("the bonus proof: a service that claims another wallet's submission is refused (exit 5) and no bonus is paid", async () => {
    const account = await env.fundedAccount();
    const ctx = env.context(account);
    await env.control('/__sandbox/hostile', { scenario: 'claims_submitted' });
    const before = await usdc(account);
    const error = await ask(ctx, askFile()).catch((e) => e);
    expect(error).toMatchObject({ code: 'unproven_submission', exitCode: 5 });
    expect(await usdc(account)).toBe(before);
  });
});

describe('a vote from the Context', () => {
  it('staked once; run again, the same vote is reported and nothing is sent', async () => {
    const account = await env.fundedAccount();
    const ctx = env.context(account);
    const contentId = String((await env.control('/__sandbox/content', {})).contentId);
    const lrep = () =>
      pub.readContract({
        address: env.sb.manifest.tokens.LREP.address as Hex,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [account.address],
      });
    const before = await lrep();
    const vote = { contentId, isUp: true, prediction: '60', stake: '2', acceptTerms: false, atomic: false };
    const r = await runRate(ctx, vote);
    expect(r).toMatchObject({ contentId, roundId: '1', stakeWei: '2000000', resumed: false });
    expect(before - (await lrep())).toBe(2_000_000n);
    const again = await runRate(env.context(account, { store: ctx.store }), vote);
    expect(again).toMatchObject({ commitHash: r.commitHash, resumed: true, transactions: 0 });
    expect(before - (await lrep())).toBe(2_000_000n);
  });
});

/** The id of the ask operation a file's clientRequestId maps to in this store (the only ask there). */
function operationOf(store: import('../src/store/db.js').Store, _file: string): string {
  return (store.db.prepare("SELECT id FROM operations WHERE kind = 'ask' ORDER BY created_at DESC LIMIT 1").get() as { id: string }).id;
}
