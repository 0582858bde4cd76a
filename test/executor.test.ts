// Resuming is matched call by call with what the journal's signed transactions carried (read back from their
// bytes): a journaled transaction carrying a call the plan does not have stops the run (exit 5) before the chain
// is touched; a plan whose calls a journaled transaction carried goes to the chain for that transaction's receipt.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeFunctionData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Executor } from '../src/wallet/executor.js';
import { RefusedError } from '../src/errors.js';
import { BUILTIN_CHAINS, type ChainConfig } from '../src/chains/table.js';
import { SpendLedger } from '../src/journal/ledger.js';
import type { Journal, JournalTx } from '../src/journal/journal.js';
import { contentRegistryAbi } from '../src/protocol/abi.js';
import type { PlanCall } from '../src/wallet/plan-guard.js';
import type { Output } from '../src/output.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

// The executor takes the wallet lock in the state folder: a private one, never the user's.
beforeAll(() => {
  process.env.XDG_STATE_HOME = mkdtempSync(path.join(tmpdir(), 'loopsign-executor-'));
});

const REGISTRY = '0x00000000000000000000000000000000000000c1' as Hex;
const chain: ChainConfig = { ...structuredClone(BUILTIN_CHAINS[31337]!), contracts: { contentRegistry: REGISTRY } };
const account = privateKeyToAccount(TEST_PRIVATE_KEY);
const out = { progress: () => {}, warn: () => {} } as unknown as Output;
const reserve = (n: number): PlanCall => ({ phase: 'reserve_submission', to: REGISTRY, data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [`0x${n.toString(16).padStart(64, '0')}`] }), value: '0' });

function fakeJournal(txs: JournalTx[], onAdd?: (tx: JournalTx) => void): Journal {
  return {
    data: { txs, wallet: account.address },
    txsFor: (stage: string) => txs.filter((t) => t.stage === stage),
    authorizations: () => [],
    addTx: async (tx: JournalTx) => {
      onAdd?.(tx);
      throw new Error('stop after journaling');
    },
    save: async () => {},
  } as unknown as Journal;
}

function executor(journal: Journal, client: unknown): Executor {
  const ledger = new SpendLedger(journal, chain, account.address, { stage: () => ({}), source: 'test' });
  return new Executor({ client: client as never, account, chain, journal, out, ledger, allowDelegation: false, maxFeePerGas: 10n ** 12n });
}

async function journaledFor(calls: PlanCall[]): Promise<JournalTx> {
  // Record what the executor itself journals for these calls, through a journal that keeps the transaction.
  let recorded: JournalTx | undefined;
  const client = { estimateGas: async () => 21_000n, getTransactionCount: async () => 0, estimateFeesPerGas: async () => ({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }), getBlock: async () => ({ baseFeePerGas: 1n }) };
  await executor(fakeJournal([], (tx) => (recorded = tx)), client).execute('ask', calls, 'ordered').catch(() => {});
  if (!recorded) throw new Error('the executor journaled nothing');
  return recorded;
}

function touchingClient() {
  const touched: string[] = [];
  // Any chain access is recorded: a refusal must come before it.
  const client = new Proxy({}, { get: (_t, name) => (touched.push(String(name)), () => Promise.reject(new Error('no chain here'))) });
  return { client, touched };
}

describe('executor resume', () => {
  it('journals the signed bytes and what they can pay (nothing, for a reservation)', async () => {
    const tx = await journaledFor([reserve(1)]);
    expect(tx.raw).toMatch(/^0x02/);
    expect(tx.effects).toEqual([]);
    expect(tx.status).toBe('signed');
  });

  it('refuses to resume a journaled transaction that carried other calls, before touching the chain', async () => {
    const tx = await journaledFor([reserve(1)]);
    const { client, touched } = touchingClient();
    const error = await executor(fakeJournal([tx]), client).execute('ask', [reserve(2)], 'ordered').catch((e) => e);
    expect(error).toBeInstanceOf(RefusedError);
    expect(error.code).toBe('plan_changed');
    expect(touched).toEqual([]);
  });

  it('resumes (goes to the chain for the receipt) when a journaled transaction carried the call', async () => {
    const tx = await journaledFor([reserve(1)]);
    const { client, touched } = touchingClient();
    await executor(fakeJournal([tx]), client).execute('ask', [reserve(1)], 'ordered').catch(() => {});
    expect(touched[0]).toBe('getTransactionReceipt');
  });

  it('a call carried by a reverted transaction and nothing else is reported reverted, not signed again', async () => {
    const tx = { ...(await journaledFor([reserve(1)])), status: 'reverted' as const };
    const { client, touched } = touchingClient();
    const error = await executor(fakeJournal([tx]), client).execute('ask', [reserve(1)], 'ordered').catch((e) => e);
    expect(error.code).toBe('transaction_reverted');
    expect(touched).toEqual([]);
  });

  it('refuses to sign above the fee cap (exit 4), before anything is signed', async () => {
    let recorded = false;
    const client = { estimateGas: async () => 21_000n, getTransactionCount: async () => 0, estimateFeesPerGas: async () => ({ maxFeePerGas: 10n ** 13n, maxPriorityFeePerGas: 1n }) };
    const error = await executor(fakeJournal([], () => (recorded = true)), client).execute('ask', [reserve(1)], 'ordered').catch((e) => e);
    expect(error.code).toBe('fee_cap');
    expect(error.exitCode).toBe(4);
    expect(recorded).toBe(false);
  });
});

describe('grouping', () => {
  it('nothing left to send is no transaction in any mode (a rerun after an atomic batch carried every call)', () => {
    for (const mode of ['ordered', 'atomic', 'segmented'] as const) expect(Executor.segments([], mode)).toEqual([]);
  });
});
