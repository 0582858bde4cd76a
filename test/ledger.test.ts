// The spend ledger (issue 11 §1): what each call can pay, read back from signed bytes; exposure per spender; and,
// as a property over random sequences of signing attempts (any stage, any grouping, any mix of approvals, pulls
// and authorizations, some reverted or expired), the caps from the user's file are never exceeded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { encodeAbiParameters, encodeFunctionData, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BUILTIN_CHAINS, type ChainConfig } from '../src/chains/table.js';
import { RefusedError } from '../src/errors.js';
import { exposure, SpendLedger } from '../src/store/ledger.js';
import { Store } from '../src/store/db.js';
import { Operation } from '../src/store/operation.js';
import { checkSameChain } from '../src/store/chain-identity.js';
import { BATCH_MODE, contentRegistryAbi, erc20Abi, erc7821Abi, feedbackBonusEscrowAbi, votingEngineAbi } from '../src/protocol/abi.js';
import { callEffects, callsOfRawTransaction, type CallLike } from '../src/wallet/spend-effects.js';
import { askSpendCaps } from '../src/ask/caps.js';
import { normalizeAsk } from '../src/protocol/ask-normalize.js';
import { TEST_PRIVATE_KEY } from './helpers/cli.js';
import { capture } from './helpers/capture.js';
import { assertAsyncProperty, replaying } from './helpers/property.js';

const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Hex;
const chain: ChainConfig = {
  ...structuredClone(BUILTIN_CHAINS[31337]!),
  contracts: {
    contentRegistry: a(1),
    questionRewardPoolEscrow: a(2),
    feedbackBonusEscrow: a(3),
    roundVotingEngine: a(4),
    advisoryVoteRecorder: a(5),
    x402QuestionSubmitter: a(6),
  },
};
chain.tokens.USDC.address = a(10);
chain.tokens.LREP.address = a(11);
const ATTACKER = a(0xbad);
const account = privateKeyToAccount(TEST_PRIVATE_KEY);

const approve = (token: Hex, spender: Hex, amount: bigint): CallLike => ({
  to: token,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
});
const pool = (amount: bigint, asset = 1): CallLike => ({
  to: a(3),
  data: encodeFunctionData({
    abi: feedbackBonusEscrowAbi,
    functionName: 'createFeedbackBonusPoolWithAsset',
    args: [7n, 1n, asset, amount, 10n ** 10n, account.address],
  }),
});
const reserve = (): CallLike => ({
  to: a(1),
  data: encodeFunctionData({ abi: contentRegistryAbi, functionName: 'reserveSubmission', args: [`0x${'11'.repeat(32)}`] }),
});
function submit(amount: bigint, asset = 1): CallLike {
  const data = encodeFunctionData({
    abi: contentRegistryAbi,
    functionName: 'submitQuestionWithRewardAndRoundConfig',
    args: [
      'https://example.com/',
      [],
      '',
      'T',
      't',
      1n,
      { detailsUrl: '', detailsHash: `0x${'00'.repeat(32)}` },
      `0x${'22'.repeat(32)}`,
      { asset, amount, requiredVoters: 3n, bountyEligibility: 0 },
      { epochDuration: 60, maxDuration: 60, minVoters: 3, maxVoters: 3 },
      { questionMetadataHash: `0x${'33'.repeat(32)}`, resultSpecHash: `0x${'44'.repeat(32)}` },
      { gated: false, bondAsset: 0, bondAmount: 0n, flags: 0 },
    ],
  });
  return { to: a(1), data };
}
const commit = (stake: bigint): CallLike => ({
  to: a(4),
  data: encodeFunctionData({
    abi: votingEngineAbi,
    functionName: 'commitVote',
    args: [7n, 65536n, 1n, `0x${'55'.repeat(32)}`, `0x${'66'.repeat(32)}`, '0x01', stake, a(0)],
  }),
});

describe('what a call can pay', () => {
  it('approvals to trusted spenders, and the pulls of submit, bonus and commit calls', () => {
    expect(callEffects(chain, approve(a(10), a(2), 5n))).toEqual([{ asset: 'USDC', kind: 'approve', spender: a(2), amount: 5n }]);
    expect(callEffects(chain, submit(1_500_000n))).toEqual([{ asset: 'USDC', kind: 'pull', spender: a(2), amount: 1_500_000n }]);
    expect(callEffects(chain, submit(2n, 0))[0]!.asset).toBe('LREP');
    expect(callEffects(chain, pool(9n))).toEqual([{ asset: 'USDC', kind: 'pull', spender: a(3), amount: 9n }]);
    expect(callEffects(chain, commit(3n))).toEqual([{ asset: 'LREP', kind: 'pull', spender: a(4), amount: 3n }]);
    expect(callEffects(chain, reserve())).toEqual([]);
  });

  it.each([
    ['an approval to an untrusted spender', approve(a(10), ATTACKER, 1n)],
    ['a token transfer', { to: a(10), data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [ATTACKER, 1n] }) }],
    ['a call to an unknown contract', { to: ATTACKER, data: '0x12345678' as Hex }],
    ['an unknown function on a trusted contract', { to: a(1), data: '0xdeadbeef' as Hex }],
  ])('refuses %s (unaccounted_call)', (_what, call) => {
    const e = (() => {
      try {
        callEffects(chain, call as CallLike);
      } catch (error) {
        return error;
      }
    })() as RefusedError;
    expect(e).toBeInstanceOf(RefusedError);
    expect(e.code).toBe('unaccounted_call');
  });

  // `budget sweep`: only the chain its own operation runs on names the grant's owner (returnTo); a transfer to it is a
  // pull of that amount, a transfer anywhere else stays unaccounted, and no other operation's chain accepts either.
  it("a token transfer is accounted only to the sweep's owner, on the sweep's chain", () => {
    const owner = a(0x0e);
    const transfer = (token: Hex, to: Hex, amount: bigint) => ({
      to: token,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
    });
    const sweepChain = { ...chain, returnTo: owner };
    expect(callEffects(sweepChain, transfer(a(10), owner, 7n))).toEqual([{ asset: 'USDC', kind: 'pull', spender: owner, amount: 7n }]);
    expect(callEffects(sweepChain, transfer(a(11), owner, 2n))).toEqual([{ asset: 'LREP', kind: 'pull', spender: owner, amount: 2n }]);
    for (const [c, call] of [
      [sweepChain, transfer(a(10), ATTACKER, 7n)],
      [chain, transfer(a(10), owner, 7n)],
    ] as const) {
      const e = (() => {
        try {
          callEffects(c, call);
        } catch (error) {
          return error;
        }
      })() as RefusedError;
      expect(e.code).toBe('unaccounted_call');
    }
  });

  it('reads the calls back from signed bytes: one call, or the inner calls of a batch sent to the wallet itself', async () => {
    const one = await account.signTransaction({
      type: 'eip1559',
      chainId: 31337,
      to: a(10),
      data: approve(a(10), a(2), 5n).data,
      nonce: 0,
      gas: 1n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    expect(callsOfRawTransaction(one, account.address)).toEqual([{ to: a(10), data: approve(a(10), a(2), 5n).data }]);
    const inner = [approve(a(10), a(3), 9n), pool(9n)];
    const executionData = encodeAbiParameters(
      [
        {
          type: 'tuple[]',
          components: [
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'data', type: 'bytes' },
          ],
        },
      ],
      [inner.map((c) => ({ ...c, value: 0n }))],
    );
    const data = encodeFunctionData({ abi: erc7821Abi, functionName: 'execute', args: [BATCH_MODE, executionData] });
    const batch = await account.signTransaction({
      type: 'eip1559',
      chainId: 31337,
      to: account.address,
      data,
      nonce: 1,
      gas: 1n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    expect(callsOfRawTransaction(batch, account.address).map((c) => c.data)).toEqual(inner.map((c) => c.data));
  });
});

describe('exposure', () => {
  it('an approval a pull then uses counts once; two approvals count twice; a pull through an outside allowance counts', () => {
    const ap = { asset: 'USDC' as const, kind: 'approve' as const, spender: a(2), amount: 5n };
    const pl = { ...ap, kind: 'pull' as const };
    expect(exposure([ap, pl])).toEqual({ USDC: 5n });
    expect(exposure([ap, pl, ap])).toEqual({ USDC: 10n });
    expect(exposure([pl])).toEqual({ USDC: 5n });
    expect(exposure([ap, { ...ap, spender: a(3) }])).toEqual({ USDC: 10n });
  });
});

// ---- the property ----

// The journal is the real database, one operation per sequence.
let store: Store;
let ops = 0;
let nonces = 0;
beforeAll(async () => {
  store = await Store.open(mkdtempSync(path.join(tmpdir(), 'loopsign-ledger-')));
});
afterAll(() => store.close());
const newOperation = () =>
  Operation.open(store, 'ask', `ask-${(ops++).toString(16).padStart(32, '0')}`, {
    chainId: 31337,
    wallet: account.address,
    data: { clientRequestId: 'ledger-property', request: {} },
  });

/** A transaction of the test wallet to `to` with `data`, signed as the executor would, at a nominal gas and fee. */
const signedCall = async (to: Hex, data: Hex, nonce: number, calls: number[]) => ({
  raw: await account.signTransaction({
    type: 'eip1559',
    chainId: 31337,
    to,
    data,
    nonce,
    gas: 1n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  }),
  nonce,
  kind: 'call' as const,
  calls,
});

const ASK = normalizeAsk({
  chainId: 31337,
  clientRequestId: 'ledger-property',
  maxPaymentAmount: '2500000',
  walletAddress: account.address,
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  feedbackBonus: { amount: '1000000', asset: 'USDC' },
  question: { title: 'T', contextUrl: 'https://example.com', categoryId: '1', tags: ['t'] },
});

// Calls a lying service (or a confused rerun) may offer at any stage.
const offered = fc.constantFrom<[string, CallLike]>(
  ['ask', approve(a(10), a(2), 1_500_000n)],
  ['ask', approve(a(10), a(2), 3_000_000n)],
  ['ask', submit(1_500_000n)],
  ['ask', reserve()],
  ['bonus', approve(a(10), a(3), 1_000_000n)],
  ['bonus', pool(1_000_000n)],
  ['bonus', approve(a(11), a(3), 1_000_000n)],
  ['ask', approve(a(10), a(3), 1_000_000n)],
);

describe('the caps from the file hold whatever is attempted', () => {
  it('random sequences of transactions (grouped at random, some reverted) and authorizations never exceed a stage or the operation', async () => {
    let attempts = 0;
    let admitted = 0;
    let refused = 0;
    await assertAsyncProperty(
      fc.asyncProperty(
        fc.array(
          fc.record({
            calls: fc.array(offered, { minLength: 1, maxLength: 3 }),
            reverted: fc.boolean(),
            authorization: fc.option(fc.constantFrom(1_500_000n, 2_500_000n), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.constantFrom('wallet_calls' as const, 'x402_authorization' as const),
        async (steps, mode) => {
          const journal = await newOperation();
          const caps = askSpendCaps(ASK, 'ask.json', mode);
          const ledger = new SpendLedger(journal, chain, account.address, caps);
          for (const [k, step] of steps.entries()) {
            attempts++;
            if (step.authorization !== undefined) {
              const message = {
                from: account.address,
                to: a(6),
                value: step.authorization.toString(),
                validAfter: '0',
                validBefore: '1',
                nonce: `0x${(nonces++).toString(16).padStart(64, '0')}` as Hex,
              };
              await ledger.admitAuthorization('ask', message, undefined, async () => '0x01').catch(() => undefined);
              continue;
            }
            const stage = step.calls[0]![0];
            const calls = step.calls.map(([, c]) => c);
            const nonce = nonces++;
            const sign = () =>
              signedCall(
                calls.length === 1 ? calls[0]!.to : account.address,
                calls.length === 1
                  ? calls[0]!.data
                  : encodeFunctionData({
                      abi: erc7821Abi,
                      functionName: 'execute',
                      args: [
                        BATCH_MODE,
                        encodeAbiParameters(
                          [
                            {
                              type: 'tuple[]',
                              components: [
                                { name: 'to', type: 'address' },
                                { name: 'value', type: 'uint256' },
                                { name: 'data', type: 'bytes' },
                              ],
                            },
                          ],
                          [calls.map((c) => ({ ...c, value: 0n }))],
                        ),
                      ],
                    }),
                nonce,
                [],
              );
            const tx = await ledger
              .admitTransaction(
                stage,
                calls.flatMap((c) => callEffects(chain, c)),
                undefined,
                sign,
              )
              .catch((e) => (expect(e.code).toBe('spend_limit'), undefined));
            if (!tx) {
              refused++;
              continue;
            }
            admitted++;
            await journal.updateTx(tx.hash, { status: step.reverted ? 'reverted' : 'mined' });
          }
          await journal.close();
          for (const stage of ['ask', 'bonus']) {
            const e = ledger.exposure(stage);
            const cap = caps.stage(stage);
            for (const asset of ['USDC', 'LREP'] as const) expect(e[asset] ?? 0n).toBeLessThanOrEqual(cap[asset] ?? 0n);
          }
          const total = ledger.exposure();
          for (const asset of ['USDC', 'LREP'] as const) expect(total[asset] ?? 0n).toBeLessThanOrEqual(caps.total?.[asset] ?? 0n);
        },
      ),
      { numRuns: 250, seed: 20261122 },
    );
    // Not vacuous: the sequences both fit and break the caps (over the whole run, not a replayed case).
    if (!replaying()) {
      expect(admitted).toBeGreaterThan(25);
      expect(refused).toBeGreaterThan(25);
    }
    capture.count('ledger property: signing attempts checked', 'ledger.test', attempts);
  });
});

describe('one nonce, one slot (issue 35)', () => {
  // A nonce of a wallet on one chain instance is one slot, owned by one intent. The executor allocates past every
  // journaled slot; the store refuses, in the admitting write transaction, a second record at a journaled nonce,
  // whatever its bytes (the same approval, or another payment): before slots, a node that gave out a nonce twice had
  // two operations share one transaction (the twins' takeover) or one pay twice.
  const ASK_CAPS = askSpendCaps(ASK, 'ask.json', 'wallet_calls');
  const sameApproval = async (ledger: SpendLedger, nonce: number) =>
    ledger.admitTransaction('ask', callEffects(chain, approve(a(10), a(2), 1_500_000n)), undefined, () =>
      signedCall(a(10), approve(a(10), a(2), 1_500_000n).data, nonce, [0]),
    );
  /** A chain instance, as checkSameChain reads it: only its block 0. */
  const instance = (genesis: string) => ({ getBlock: async () => ({ hash: genesis }) }) as unknown as PublicClient;
  const usageOf = (id: string) =>
    store.read((db) => (db.prepare('SELECT COALESCE(SUM(amount), 0) AS n FROM usage WHERE operation_id = ?').get(id) as { n: number }).n);

  const withInstance = async (genesis: string) => {
    const op = await newOperation();
    await checkSameChain(instance(genesis), op, '--set-aside-stale');
    return op;
  };

  for (const same of [true, false])
    it(`a second record at a journaled nonce is refused, nothing recorded (${same ? 'the very same bytes' : 'other bytes'})`, async () => {
      const g = `0x${same ? '05' : '06'}${'00'.repeat(31)}`;
      const first = await withInstance(g);
      const second = await withInstance(g);
      const nonce = nonces++;
      await sameApproval(new SpendLedger(first, chain, account.address, ASK_CAPS), nonce);
      const other = (ledger: SpendLedger) =>
        ledger.admitTransaction('ask', callEffects(chain, approve(a(10), a(2), 1_000_000n)), undefined, () =>
          signedCall(a(10), approve(a(10), a(2), 1_000_000n).data, nonce, [0]),
        );
      const ledger = new SpendLedger(second, chain, account.address, ASK_CAPS);
      const error = await (same ? sameApproval(ledger, nonce) : other(ledger)).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'stale_nonce', exitCode: 4 });
      expect(second.txs()).toEqual([]);
      expect(usageOf(second.id)).toBe(0);
      first.refresh();
      expect(first.txs().map((t) => t.status)).toEqual(['signed']);
      expect(usageOf(first.id)).toBe(1_500_000);
      await first.close();
      await second.close();
    });

  it('a self-executed EIP-7702 batch holds its nonce and the next (its authorization takes it)', async () => {
    const g = `0x07${'00'.repeat(31)}`;
    const first = await withInstance(g);
    const second = await withInstance(g);
    const nonce = nonces;
    nonces += 2;
    await first.write((db) =>
      first.insertTx(
        db,
        { stage: 'ask', calls: [0], hash: `0x${'ab'.repeat(32)}`, raw: '0x01', nonce, kind: 'batch+authorization' },
        [],
        Date.now(),
      ),
    );
    const error = await sameApproval(new SpendLedger(second, chain, account.address, ASK_CAPS), nonce + 1).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'stale_nonce' });
    await first.close();
    await second.close();
  });

  it('on a restarted chain, an operation whose earlier run signed nothing is of the new instance: bytes mined on the old one are no stale nonce', async () => {
    // Instance 1: one operation's approval mined; another operation reaches the chain (its block 0 recorded) and
    // stops before it signs anything. The chain restarts (instance 2): the wallet's nonces start again, and the
    // second operation's rerun signs the same approval with the same nonce, gas and fees. It kept instance 1's block
    // 0, so those bytes, mined on instance 1 only, refused it stale_nonce ("the node lags") on every rerun.
    const [g1, g2] = [`0x${'01'.repeat(32)}`, `0x${'02'.repeat(32)}`];
    const first = await newOperation();
    const second = await newOperation();
    await checkSameChain(instance(g1), first, '--set-aside-stale');
    await checkSameChain(instance(g1), second, '--set-aside-stale');
    const nonce = nonces++;
    const mined = await sameApproval(new SpendLedger(first, chain, account.address, ASK_CAPS), nonce);
    await first.updateTx(mined.hash, { status: 'mined' });
    await checkSameChain(instance(g2), second, '--set-aside-stale');
    expect(second.chainGenesis).toBe(g2);
    const signed = await sameApproval(new SpendLedger(second, chain, account.address, ASK_CAPS), nonce);
    expect(signed.status).toBe('signed');
    first.refresh();
    expect(first.txs().map((t) => t.status)).toEqual(['mined']);
    await first.close();
    await second.close();
  });

  it('already mined under another operation on this chain instance: the node gave out a used nonce (it lags); nothing is recorded', async () => {
    const first = await newOperation();
    const second = await newOperation();
    for (const op of [first, second]) await checkSameChain(instance(`0x${'03'.repeat(32)}`), op, '--set-aside-stale');
    const nonce = nonces++;
    const mined = await sameApproval(new SpendLedger(first, chain, account.address, ASK_CAPS), nonce);
    await first.updateTx(mined.hash, { status: 'mined' });
    const error = await sameApproval(new SpendLedger(second, chain, account.address, ASK_CAPS), nonce).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'stale_nonce', exitCode: 4 });
    expect(second.txs()).toEqual([]);
    expect(usageOf(second.id)).toBe(0);
    first.refresh();
    expect(first.txs().map((t) => t.status)).toEqual(['mined']);
    await first.close();
    await second.close();
  });

  it('mined under an operation whose chain instance is unknown (a journal of the JSON era): no proof of a used nonce here, the bytes are recorded', async () => {
    // Such a journal's mined approval may be a restarted chain's: the same ask on a fresh sandbox signs the same bytes
    // with the same nonces. Taking it for a lagging node refused every new operation at those nonces (stale_nonce).
    const imported = await newOperation();
    const current = await newOperation();
    await checkSameChain(instance(`0x${'04'.repeat(32)}`), current, '--set-aside-stale');
    const nonce = nonces++;
    const mined = await sameApproval(new SpendLedger(imported, chain, account.address, ASK_CAPS), nonce);
    await imported.updateTx(mined.hash, { status: 'mined' });
    const signed = await sameApproval(new SpendLedger(current, chain, account.address, ASK_CAPS), nonce);
    expect(signed.status).toBe('signed');
    imported.refresh();
    expect(imported.txs().map((t) => t.status)).toEqual(['mined']);
    await imported.close();
    await current.close();
  });
});
