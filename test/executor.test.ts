// Resuming a journaled transaction is only safe if it carried the calls being resumed: the executor compares the
// journaled digest of the calls with the plan and stops (exit 5) before touching the chain when they differ.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { Executor } from '../src/wallet/executor.js';
import { RefusedError } from '../src/errors.js';
import { BUILTIN_CHAINS } from '../src/chains/table.js';
import type { Journal, JournalTx } from '../src/journal/journal.js';
import type { PlanCall } from '../src/wallet/plan-guard.js';
import type { Output } from '../src/output.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

// The executor takes the wallet lock in the state folder: a private one, never the user's.
beforeAll(() => {
  process.env.XDG_STATE_HOME = mkdtempSync(path.join(tmpdir(), 'loopsign-executor-'));
});

const call = (data: `0x${string}`): PlanCall => ({ phase: 'submit_question', to: '0x00000000000000000000000000000000000000c1', data, value: '0' });

function executorWith(journaled: JournalTx[]) {
  const touched: string[] = [];
  // Any chain access would be recorded: a refusal must come before it.
  const client = new Proxy({}, { get: (_t, name) => (touched.push(String(name)), () => Promise.reject(new Error('no chain here'))) });
  const journal = { txsFor: (stage: string) => journaled.filter((t) => t.stage === stage) } as unknown as Journal;
  const out = { progress: () => {}, warn: () => {} } as unknown as Output;
  return { executor: new Executor(client as never, privateKeyToAccount(TEST_PRIVATE_KEY), BUILTIN_CHAINS[31337]!, journal, out, false), touched };
}

async function journaledFor(calls: PlanCall[]): Promise<JournalTx> {
  // Record what the executor itself would journal for these calls, through a journal that keeps the transaction.
  let recorded: JournalTx | undefined;
  const journal = { txsFor: () => [], addTx: async (tx: JournalTx) => { recorded = tx; throw new Error('stop after journaling'); } } as unknown as Journal;
  const client = { estimateGas: async () => 21_000n, getTransactionCount: async () => 0, estimateFeesPerGas: async () => ({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }), getBlock: async () => ({ baseFeePerGas: 1n }) };
  const out = { progress: () => {}, warn: () => {} } as unknown as Output;
  await new Executor(client as never, privateKeyToAccount(TEST_PRIVATE_KEY), BUILTIN_CHAINS[31337]!, journal, out, false).execute('ask', calls, 'ordered').catch(() => {});
  if (!recorded) throw new Error('the executor journaled nothing');
  return recorded;
}

describe('executor resume', () => {
  it('journals a digest of the calls with every signed transaction', async () => {
    const tx = await journaledFor([call('0x01')]);
    expect(tx.callsDigest).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await journaledFor([call('0x02')])).callsDigest).not.toBe(tx.callsDigest);
  });

  it('refuses to resume a journaled transaction that carried other calls, before touching the chain', async () => {
    const tx = await journaledFor([call('0x01')]);
    const { executor, touched } = executorWith([tx]);
    const error = await executor.execute('ask', [call('0x02')], 'ordered').catch((e) => e);
    expect(error).toBeInstanceOf(RefusedError);
    expect(error.code).toBe('plan_changed');
    expect(touched).toEqual([]);
  });

  it('resumes (goes to the chain for the receipt) when the calls match', async () => {
    const tx = await journaledFor([call('0x01')]);
    const { executor, touched } = executorWith([tx]);
    await executor.execute('ask', [call('0x01')], 'ordered').catch(() => {});
    expect(touched.length).toBeGreaterThan(0);
  });
});
