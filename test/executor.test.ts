// Resuming is matched call by call with what the journal's signed transactions carried (read back from their
// bytes): a journaled transaction carrying a call the plan does not have stops the run (exit 5) before the chain
// is touched; a plan whose calls a journaled transaction carried goes to the chain for that transaction's receipt.
// The journal is the real database, in a private folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeFunctionData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Executor } from '../src/wallet/executor.js';
import { RefusedError } from '../src/errors.js';
import { BUILTIN_CHAINS, type ChainConfig } from '../src/chains/table.js';
import { SpendLedger } from '../src/store/ledger.js';
import { Store } from '../src/store/db.js';
import { Operation } from '../src/store/operation.js';
import type { TxRecord } from '../src/store/records.js';
import { contentRegistryAbi } from '../src/protocol/abi.js';
import type { PlanCall } from '../src/wallet/plan-guard.js';
import type { Output } from '../src/output.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

let store: Store;
let n = 0;
beforeAll(async () => {
  store = await Store.open(mkdtempSync(path.join(tmpdir(), 'loopsign-executor-')));
});
afterAll(() => store.close());

const REGISTRY = '0x00000000000000000000000000000000000000c1' as Hex;
const chain: ChainConfig = { ...structuredClone(BUILTIN_CHAINS[31337]!), contracts: { contentRegistry: REGISTRY } };
const account = privateKeyToAccount(TEST_PRIVATE_KEY);
const out = { progress: () => {}, warn: () => {} } as unknown as Output;
const reserve = (k: number): PlanCall => ({
  phase: 'reserve_submission',
  to: REGISTRY,
  data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [`0x${k.toString(16).padStart(64, '0')}`] }),
  value: '0',
});

const newOperation = () =>
  Operation.open(store, 'ask', `ask-${(n++).toString(16).padStart(32, '0')}`, {
    chainId: 31337,
    wallet: account.address,
    data: { clientRequestId: `x${n}`, request: {} },
  });

function executor(op: Operation<'ask'>, client: unknown): Executor {
  const ledger = new SpendLedger(op, chain, account.address, { stage: () => ({}), source: 'test' });
  return new Executor({ client: client as never, account, chain, op, out, ledger, allowDelegation: false, maxFeePerGas: 10n ** 12n });
}

/** An operation whose journal holds what the executor itself recorded for these calls (its broadcast failed). */
async function journaledFor(calls: PlanCall[]): Promise<{ op: Operation<'ask'>; tx: TxRecord }> {
  const op = await newOperation();
  const nonce = n; // a nonce of its own: the same bytes are never signed twice
  const client = {
    estimateGas: async () => 21_000n,
    getTransactionCount: async () => nonce,
    estimateFeesPerGas: async () => ({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }),
    getBlock: async () => ({ baseFeePerGas: 1n }),
    sendRawTransaction: async () => Promise.reject(new Error('stop after journaling')),
  };
  await executor(op, client)
    .execute('ask', calls, 'ordered')
    .catch(() => {});
  const tx = op.txs()[0];
  if (!tx) throw new Error('the executor journaled nothing');
  return { op, tx };
}

function touchingClient() {
  const touched: string[] = [];
  // Any chain access is recorded: a refusal must come before it.
  const client = new Proxy({}, { get: (_t, name) => (touched.push(String(name)), () => Promise.reject(new Error('no chain here'))) });
  return { client, touched };
}

describe('executor resume', () => {
  it('journals the signed bytes, and records nothing it can pay for a reservation', async () => {
    const { op, tx } = await journaledFor([reserve(1)]);
    expect(tx.raw).toMatch(/^0x02/);
    expect(tx.status).toBe('signed');
    expect(store.read((db) => db.prepare('SELECT COUNT(*) AS c FROM effects WHERE operation_id = ?').get(op.id))).toEqual({ c: 0 });
    await op.close();
  });

  it('refuses to resume a journaled transaction that carried other calls, before touching the chain', async () => {
    const { op } = await journaledFor([reserve(1)]);
    const { client, touched } = touchingClient();
    const error = await executor(op, client)
      .execute('ask', [reserve(2)], 'ordered')
      .catch((e) => e);
    expect(error).toBeInstanceOf(RefusedError);
    expect(error.code).toBe('plan_changed');
    expect(touched).toEqual([]);
    await op.close();
  });

  it('resumes (goes to the chain for the receipt) when a journaled transaction carried the call', async () => {
    const { op } = await journaledFor([reserve(1)]);
    const { client, touched } = touchingClient();
    await executor(op, client)
      .execute('ask', [reserve(1)], 'ordered')
      .catch(() => {});
    expect(touched[0]).toBe('getTransactionReceipt');
    await op.close();
  });

  it('a call carried by a reverted transaction and nothing else is reported reverted, not signed again', async () => {
    const { op, tx } = await journaledFor([reserve(1)]);
    await op.updateTx(tx.hash, { status: 'reverted' });
    const { client, touched } = touchingClient();
    const error = await executor(op, client)
      .execute('ask', [reserve(1)], 'ordered')
      .catch((e) => e);
    expect(error.code).toBe('transaction_reverted');
    expect(touched).toEqual([]);
    expect(op.txs()).toHaveLength(1);
    await op.close();
  });

  it('refuses to sign above the fee cap (exit 4), before anything is signed', async () => {
    const op = await newOperation();
    const nonce = n; // a nonce of its own: the same bytes are never signed twice
    const client = {
      estimateGas: async () => 21_000n,
      getTransactionCount: async () => nonce,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 10n ** 13n, maxPriorityFeePerGas: 1n }),
    };
    const error = await executor(op, client)
      .execute('ask', [reserve(1)], 'ordered')
      .catch((e) => e);
    expect(error.code).toBe('fee_cap');
    expect(error.exitCode).toBe(4);
    expect(op.txs()).toHaveLength(0);
    await op.close();
  });
});

describe('grouping', () => {
  it('nothing left to send is no transaction in any mode (a rerun after an atomic batch carried every call)', () => {
    for (const mode of ['ordered', 'atomic', 'segmented'] as const) expect(Executor.segments([], mode)).toEqual([]);
  });
});

// Red team (h16): the executor sends ETH only for the one transfer a `budget grant --eth-now` chain copy names. A call
// carrying value on any other chain copy (a hostile plan past the plan guard), to another address, of another amount,
// with calldata, or inside a batch is refused before anything is signed. Before the --eth-now change the executor
// signed every call with value 0 and these refusals did not exist.
describe('native value', () => {
  const SESSION = '0x00000000000000000000000000000000000000a5' as Hex;
  const send = async (c: ChainConfig, calls: PlanCall[], mode: 'ordered' | 'atomic' = 'ordered') => {
    const op = await newOperation();
    const nonce = n;
    const client = {
      estimateGas: async () => 21_000n,
      getTransactionCount: async () => nonce,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }),
      getBlock: async () => ({ baseFeePerGas: 1n }),
      getCode: async () => undefined,
      sendRawTransaction: async () => Promise.reject(new Error('stop after journaling')),
    };
    const ledger = new SpendLedger(op, c, account.address, { stage: () => ({}), source: 'test' });
    const ex = new Executor({
      client: client as never,
      account,
      chain: c,
      op,
      out,
      ledger,
      allowDelegation: false,
      maxFeePerGas: 10n ** 12n,
    });
    const error = await ex.execute('eth_now', calls, mode).catch((e) => e);
    const txs = op.txs();
    await op.close();
    return { error, txs };
  };
  const eth = (to: Hex, value: bigint, data: Hex = '0x'): PlanCall => ({ phase: 'eth_now', to, data, value: value.toString() });
  const withEthNow: ChainConfig = { ...chain, ethNow: { to: SESSION, value: 10n ** 16n } };

  it.each([
    ['a plain chain copy (an ask, a rate, a revoke)', chain, eth(SESSION, 10n ** 16n)],
    ['a value on a contract call of a plain chain copy', chain, { ...reserve(9), value: '1' }],
    ['another recipient', withEthNow, eth(REGISTRY, 10n ** 16n)],
    ['more than named', withEthNow, eth(SESSION, 10n ** 16n + 1n)],
    ['calldata with the value', withEthNow, eth(SESSION, 10n ** 16n, '0x00')],
  ])('refuses %s before anything is signed', async (_what, c, call) => {
    const { error, txs } = await send(c, [call]);
    expect(error).toBeInstanceOf(RefusedError);
    expect(error.code).toBe('unaccounted_call');
    expect(txs).toHaveLength(0);
  });

  it('refuses the named transfer inside a batch', async () => {
    const { error, txs } = await send(withEthNow, [reserve(10), eth(SESSION, 10n ** 16n)], 'atomic');
    expect(error).toBeInstanceOf(RefusedError);
    expect(txs).toHaveLength(0);
  });

  it('signs exactly the named transfer with its value', async () => {
    const { txs } = await send(withEthNow, [eth(SESSION, 10n ** 16n)]);
    expect(txs).toHaveLength(1);
    const { parseTransaction } = await import('viem');
    const t = parseTransaction(txs[0]!.raw);
    expect([t.to?.toLowerCase(), t.value]).toEqual([SESSION, 10n ** 16n]);
  });
});
