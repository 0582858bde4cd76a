// Where each journaled transaction stands (src/wallet/tx-states.ts), as `status` and `history` show it: labels from
// the journal alone, and the finalized-block verdict read from an in-process chain (test/helpers/sim-chain.ts) whose
// finalized pointer, reorgs and failing reads the test controls.
import { describe, expect, it } from 'vitest';
import { keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { labelTransactions, transactionStates, describeTxState } from '../src/wallet/tx-states.js';
import type { TxRecord } from '../src/store/records.js';
import { HONEST, SimChain } from './helpers/sim-chain.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';

const account = privateKeyToAccount(TEST_PRIVATE_KEY);
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;
const tx = (n: number, o: Partial<TxRecord> = {}): TxRecord => ({
  stage: 'ask',
  calls: [0],
  hash: hash(n + 1),
  raw: '0x',
  nonce: n,
  kind: 'call',
  status: 'mined',
  blockNumber: '5',
  signedAt: 0,
  ...o,
});

describe('labelTransactions (no chain access)', () => {
  it('the journal alone: open, reverted, void, taken, cancelled', () => {
    const cancel = { kind: 'cancel' as const, hash: hash(99), raw: '0x' as Hex, nonce: 4, status: 'mined' as const, blockNumber: '7' };
    const states = labelTransactions(
      [
        tx(0, { status: 'signed', blockNumber: undefined }),
        tx(1, { status: 'reverted' }),
        tx(2, { status: 'dropped', voidChecked: true, blockNumber: undefined }),
        tx(3, { status: 'dropped', blockNumber: undefined }),
        tx(4, { status: 'signed', blockNumber: undefined, versions: [cancel] }),
        // A fee bump at the same nonce carries the same calls: seen mined before the record adopts it, never "cancelled".
        tx(5, { status: 'signed', blockNumber: undefined, versions: [{ ...cancel, kind: 'bump', nonce: 5 }] }),
      ],
      undefined,
    );
    expect(states.map((s) => s.state)).toEqual(['open', 'reverted', 'void', 'taken', 'cancelled', 'open']);
    expect(states[1]).toMatchObject({ blockNumber: '5', confirmations: null, finalAtBlock: null });
  });

  it('mined above the finalized block: included, with its confirmations and the block it is final at', () => {
    const [s] = labelTransactions([tx(0, { blockNumber: '10' })], { finalized: 8n, head: 12n });
    expect(s).toMatchObject({ state: 'included', blockNumber: '10', confirmations: 3, finalAtBlock: '10' });
    expect(describeTxState(s!, { tag: 'finalized', finalizedBlock: '8', headBlock: '12' })).toBe(
      'included (block 10, 3 confirmations), final when the finalized block reaches 10 (now 8)',
    );
  });

  it('mined at or below the finalized block: final only with its own receipt read again there', () => {
    const chain = { finalized: 10n, head: 12n };
    expect(labelTransactions([tx(0, { blockNumber: '10' })], chain, new Map([[hash(1), { blockNumber: 10n }]]))[0]).toMatchObject({
      state: 'final',
      blockNumber: '10',
      confirmations: null,
      finalAtBlock: null,
    });
    // No receipt read, none found, or a failed read: never final.
    expect(labelTransactions([tx(0, { blockNumber: '10' })], chain)[0]!.state).toBe('unknown');
    const none = labelTransactions([tx(0, { blockNumber: '10' })], chain, new Map([[hash(1), { none: true as const }]]))[0]!;
    expect(none).toMatchObject({
      state: 'unknown',
      reason: expect.stringMatching(/no receipt for it, though loopsign saw it mined in block 10/),
    });
    const failed = labelTransactions([tx(0, { blockNumber: '10' })], chain, new Map([[hash(1), { failed: 'HTTP 503' }]]))[0]!;
    expect(failed).toMatchObject({ state: 'unknown', reason: 'its receipt could not be read: HTTP 503' });
    // Found again in a later block (a reorg moved it): included there, not final.
    expect(labelTransactions([tx(0, { blockNumber: '9' })], chain, new Map([[hash(1), { blockNumber: 11n }]]))[0]).toMatchObject({
      state: 'included',
      blockNumber: '11',
      finalAtBlock: '11',
    });
  });

  it('a chain that could not be read: unknown with the reason for what was mined, the journal for the rest', () => {
    const states = labelTransactions([tx(0), tx(1, { status: 'signed' })], { unknown: "could not read the chain's finalized block (x)" });
    expect(states.map((s) => [s.state, s.reason])).toEqual([
      ['unknown', "could not read the chain's finalized block (x)"],
      ['open', undefined],
    ]);
  });
});

describe('transactionStates (an in-process chain)', () => {
  /** A chain with the wallet's transactions 0..n-1 mined one a block; returns the journal records of them. */
  async function chainWith(n: number): Promise<{ sim: SimChain; records: TxRecord[] }> {
    const sim = new SimChain();
    const records: TxRecord[] = [];
    for (let i = 0; i < n; i++) {
      const raw = await account.signTransaction({
        chainId: 31337,
        nonce: i,
        to: account.address,
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: 1_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });
      await sim.add(raw, true);
      sim.mine(account.address.toLowerCase() as Hex, [0], true);
      records.push(tx(i, { hash: keccak256(raw), raw, blockNumber: String(sim.head) }));
    }
    return { sim, records };
  }

  it('reads the finalized block once: final below it, included above it; nothing read when nothing was mined', async () => {
    const { sim, records } = await chainWith(3);
    sim.finalize(2);
    const calls: string[] = [];
    const client = sim.client((m, p) => {
      calls.push(m === 'eth_getBlockByNumber' ? `${m} ${String(p[0])}` : m);
      return sim.answer(HONEST, m, p);
    });
    const states = await transactionStates(async () => client, {}, records);
    expect(states.finality).toEqual({ tag: 'finalized', finalizedBlock: '2', headBlock: '3' });
    expect(states.transactions.map((t) => [t.state, t.blockNumber, t.confirmations])).toEqual([
      ['final', '1', null],
      ['final', '2', null],
      ['included', '3', 1],
    ]);
    expect(calls.filter((c) => c === 'eth_getBlockByNumber finalized')).toHaveLength(1);
    // Only the two that would be final have their receipts read again.
    expect(calls.filter((c) => c === 'eth_getTransactionReceipt')).toHaveLength(2);
    calls.length = 0;
    const open = await transactionStates(async () => client, {}, [{ ...records[0]!, status: 'signed' }]);
    expect(open).toEqual({ finality: null, transactions: [expect.objectContaining({ state: 'open' })] });
    expect(calls).toEqual([]);
  });

  it('the safe tag when the chain is configured so', async () => {
    const { sim, records } = await chainWith(1);
    sim.finalize(1);
    const client = sim.client((m, p) => sim.answer(HONEST, m, p));
    const calls: unknown[] = [];
    const spy = sim.client((m, p) => {
      if (m === 'eth_getBlockByNumber') calls.push(p[0]);
      return client.request({ method: m as never, params: p as never });
    });
    expect((await transactionStates(async () => spy, { finality: 'safe' }, records)).finality).toMatchObject({ tag: 'safe' });
    expect(calls).toEqual(['safe']);
  });

  it('a failed finalized read, or no connection: unknown with why, never final', async () => {
    const { sim, records } = await chainWith(2);
    sim.finalize(2);
    const failing = sim.client(async (m, p) => {
      if (m === 'eth_getBlockByNumber' && p[0] === 'finalized') throw new Error('the node is overloaded (test)');
      return sim.answer(HONEST, m, p);
    });
    const states = await transactionStates(async () => failing, {}, records);
    expect(states.finality).toMatchObject({ tag: 'finalized', unknown: expect.stringMatching(/overloaded/) });
    expect(states.transactions.map((t) => t.state)).toEqual(['unknown', 'unknown']);
    expect(states.transactions[0]!.reason).toMatch(/could not read the chain's finalized block \(.*overloaded/);
    const unreachable = await transactionStates(
      async () => {
        throw new Error('no RPC');
      },
      {},
      records,
    );
    expect(unreachable.transactions.map((t) => [t.state, t.reason])).toEqual([
      ['unknown', "could not read the chain's finalized block (no RPC)"],
      ['unknown', "could not read the chain's finalized block (no RPC)"],
    ]);
  });

  it('a journal block the chain no longer holds the transaction in (reorged away, another instance): unknown', async () => {
    const { sim, records } = await chainWith(2);
    sim.reorg(2);
    // Two foreign blocks then, finalized past the journal's blocks.
    sim.mine(account.address.toLowerCase() as Hex, [], true);
    sim.mine(account.address.toLowerCase() as Hex, [], true);
    sim.finalize(2);
    const client = sim.client(async (m, p) => {
      // Held back: the reorged bytes went back to the mempool, and an honest node answers them pending.
      if (m === 'eth_getTransactionReceipt') return null;
      return sim.answer(HONEST, m, p);
    });
    const states = await transactionStates(async () => client, {}, records);
    expect(states.transactions.map((t) => t.state)).toEqual(['unknown', 'unknown']);
    expect(states.transactions[0]!.reason).toMatch(/no receipt for it/);
  });
});
