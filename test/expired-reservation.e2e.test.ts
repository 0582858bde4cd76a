// An expired reservation, as the live ContentRegistry treats it (docs/sandbox.md, issue 35 attack 4): its slot stays
// taken until the submitter cancels it or a submit consumes it, and the same reserveSubmission sent again reverts with
// empty data. First the sandbox's registry itself (raw JSON-RPC, no loopsign code on the path), then loopsign: an ask
// stopped after its reservation, resumed past the 30 minutes, cancels it (its own call, journaled), reserves again and
// finishes, paying its bounty and its bonus once, whichever step the resumed run is killed at.
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseAbiItem, type Hex } from 'viem';
import { makeHome, runCli } from './helpers/cli.js';
import { fundedWallet, openSession, submissionsTitled, type Session } from './helpers/chain.js';
import { recordedOfKind } from './helpers/store.js';
import { contentRegistryAbi } from '../src/protocol/abi.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

const reserved = parseAbiItem('event SubmissionReserved(address indexed submitter, bytes32 indexed revealCommitment, uint256 expiresAt)');
const cancelled = parseAbiItem('event SubmissionReservationCancelled(address indexed submitter, bytes32 indexed revealCommitment)');
const PAST_EXPIRY = 1900;

/** A wallet of the test's own (so balances and events are this test's alone), funded by the sandbox. */
const freshWallet = () => fundedWallet(s.sb, s.pub);

async function rpc(method: string, params: unknown[]): Promise<{ result?: any; error?: { code: number; message: string; data?: string } }> {
  const res = await fetch(s.sb.info.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as never;
}

const registryCall = (functionName: 'reserveSubmission' | 'cancelReservedSubmission', commitment: Hex) =>
  encodeFunctionData({ abi: contentRegistryAbi, functionName, args: [commitment] });

describe("the sandbox's ContentRegistry keeps an expired reservation's slot (the live rule)", () => {
  const registry = () => s.sb.info.contracts.contentRegistry!;
  // The revert data of a call from `from`, or 'ok' when it would not revert.
  const simulate = async (from: Hex, data: Hex) => {
    const r = await rpc('eth_call', [{ from, to: registry(), data }, 'latest']);
    return r.error ? { reverted: r.error.data ?? '0x' } : 'ok';
  };
  const send = async (from: Awaited<ReturnType<typeof freshWallet>>, data: Hex) => {
    const raw = await from.account.signTransaction({
      type: 'eip1559',
      chainId: s.sb.info.chainId,
      to: registry(),
      data,
      nonce: await s.pub.getTransactionCount({ address: from.address, blockTag: 'pending' }),
      gas: 200_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    });
    return s.pub.waitForTransactionReceipt({ hash: await s.pub.sendRawTransaction({ serializedTransaction: raw }) });
  };
  const newCommitment = () => `0x${randomBytes(32).toString('hex')}` as Hex;

  it('an expired reservation sent again reverts with empty data (mined too) until its submitter cancels it; then it can be reserved again', async () => {
    const w = await freshWallet();
    const commitment = newCommitment();
    expect((await send(w, registryCall('reserveSubmission', commitment))).status).toBe('success');
    await s.sb.control('/__sandbox/time', { advanceSeconds: PAST_EXPIRY });
    // Past its 30 minutes the slot is still taken, and the revert carries no data (the live registry's bare require).
    expect(await simulate(w.address, registryCall('reserveSubmission', commitment)), 'an expired reservation again').toEqual({
      reverted: '0x',
    });
    expect((await send(w, registryCall('reserveSubmission', commitment))).status, 'mined, it reverts too').toBe('reverted');
    // The submitter's cancel frees the slot (after expiry, as loopsign sends it), with the live event.
    const cancel = await send(w, registryCall('cancelReservedSubmission', commitment));
    expect(cancel.status).toBe('success');
    const logs = await s.pub.getLogs({
      address: registry(),
      event: cancelled,
      args: { submitter: w.address },
      fromBlock: cancel.blockNumber,
    });
    expect(logs.map((l) => l.args.revealCommitment)).toEqual([commitment]);
    expect(await simulate(w.address, registryCall('cancelReservedSubmission', commitment)), 'nothing left to cancel').toEqual({
      reverted: '0x',
    });
    expect((await send(w, registryCall('reserveSubmission', commitment))).status, 'reserved again').toBe('success');
  });

  it('a live reservation sent again reverts with empty data; slots are per submitter, and only the submitter cancels, live or expired', async () => {
    const [w, other] = [await freshWallet(), await freshWallet()];
    const commitment = newCommitment();
    expect((await send(w, registryCall('reserveSubmission', commitment))).status).toBe('success');
    expect(await simulate(w.address, registryCall('reserveSubmission', commitment)), 'a live reservation again').toEqual({
      reverted: '0x',
    });
    // Another wallet cannot cancel this one's, and its own reservation of the same commitment is its own slot.
    expect(await simulate(other.address, registryCall('cancelReservedSubmission', commitment))).toEqual({ reverted: '0x' });
    expect(await simulate(other.address, registryCall('reserveSubmission', commitment))).toBe('ok');
    // A live reservation can be cancelled too: the live registry has no age rule for it.
    expect(await simulate(w.address, registryCall('cancelReservedSubmission', commitment))).toBe('ok');
  });
});

describe('loopsign: a resumed ask whose reservation expired cancels it, reserves again, and pays once', () => {
  let n = 0;
  /** An ask of `w` with a 1.5 USDC bounty and a 1 USDC feedback bonus, killed at `point` (its reservation mined). */
  async function stoppedAfterReservation(w: Awaited<ReturnType<typeof freshWallet>>, point = 'ask:mined:0', expire = true) {
    const title = `Expired reservation ${process.pid} ${Date.now()} ${n++}`;
    const file = s.home.file(
      `expired-${n}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `expired-${process.pid}-${Date.now()}-${n}`,
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        question: { title, contextUrl: `https://example.com/expired/${n}`, categoryId: '1', tags: ['expired'] },
        // Two hours: a round that opens before the clock moves past the 30 minutes is still open for its bonus.
        roundConfig: { questionDurationSeconds: '7200', minVoters: '3', maxVoters: '100' },
      }),
    );
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const killed = await runCli(args, s.home, { env: { ...w.env, LOOPSIGN_CRASH_AFTER: point } });
    expect(killed.code, `killed at ${point}: ${killed.stderr}`).toBe(-1);
    // Past the reservation's 30 minutes on the chain's clock.
    if (expire) await s.sb.control('/__sandbox/time', { advanceSeconds: PAST_EXPIRY });
    return { title, args };
  }

  /** Finished, on chain: one question, one bounty, one bonus pool, one cancel of this wallet's first reservation. */
  async function paidOnce(w: Awaited<ReturnType<typeof freshWallet>>, title: string, before: bigint, doc: any) {
    expect(doc.status).toBe('submitted');
    expect(doc.contentIds).toHaveLength(1);
    expect(doc.feedbackBonus.status).toBe('funded');
    expect(await submissionsTitled(s, title, w.address), 'one submission').toBe(1);
    expect(await bonusPoolsFundedBy(w.address, doc.contentIds[0]), 'one bonus pool').toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty once and the bonus once').toBe(2_500_000n);
    const registry = s.sb.info.contracts.contentRegistry!;
    const reservations = await s.pub.getLogs({ address: registry, event: reserved, args: { submitter: w.address }, fromBlock: 0n });
    const cancelLogs = await s.pub.getLogs({ address: registry, event: cancelled, args: { submitter: w.address }, fromBlock: 0n });
    expect(reservations, 'reserved, then reserved again').toHaveLength(2);
    expect(cancelLogs, 'the expired reservation cancelled once').toHaveLength(1);
    expect(cancelLogs[0]!.args.revealCommitment).toBe(reservations[0]!.args.revealCommitment);
    const [op] = recordedOfKind(s.home, 'ask').filter((o) => o.txs.some((t) => t.stage === 'ask:cancel-expired-reservation'));
    expect(op, 'the cancel is journaled in its own stage').toBeDefined();
  }

  async function bonusPoolsFundedBy(funder: Hex, contentId: string): Promise<number> {
    const logs = await s.pub.getLogs({
      address: s.sb.info.contracts.feedbackBonusEscrow!,
      event: parseAbiItem(
        'event FeedbackBonusPoolCreated(uint256 indexed poolId, uint256 indexed contentId, uint256 indexed roundId, address funder, address awarder, uint256 amount, uint256 feedbackClosesAt, uint256 frontendFeeBps, uint8 asset)',
      ),
      args: { contentId: BigInt(contentId) },
      fromBlock: 0n,
    });
    return logs.filter((l) => l.args.funder?.toLowerCase() === funder.toLowerCase()).length;
  }

  it.each(['ask:mined:0', 'ask:mined:1'])(
    'stopped after %s, resumed past the 30 minutes: cancelled, reserved again, submitted, bounty and bonus paid once',
    async (point) => {
      const w = await freshWallet();
      const before = await w.usdcOf();
      const { title, args } = await stoppedAfterReservation(w, point);
      const resumed = await runCli(args, s.home, { env: w.env });
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/"event":"ask\.reservation_expired"/);
      await paidOnce(w, title, before, resumed.json());
      // A third run finds it all done: nothing more is signed.
      const again = await runCli(args, s.home, { env: w.env });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      await paidOnce(w, title, before, again.json());
    },
  );

  // The resumed run killed around its cancel: after the old reservation is retired (nothing signed yet), after the
  // cancel is signed (journaled, not broadcast), once it is mined, and once the new reservation is signed and mined.
  it.each([
    'ask:reservation_retired',
    'ask:cancel-expired-reservation:signed:0',
    'ask:cancel-expired-reservation:mined:0',
    'ask:signed:0',
    'ask:mined:0',
  ])('the resumed run killed after %s: the next run finishes, one cancel, paid once', async (point) => {
    const w = await freshWallet();
    const before = await w.usdcOf();
    const { title, args } = await stoppedAfterReservation(w);
    const killed = await runCli(args, s.home, { env: { ...w.env, LOOPSIGN_CRASH_AFTER: point } });
    expect(killed.code, `the resumed run must be killed at ${point}: ${killed.stdout}${killed.stderr}`).toBe(-1);
    const finished = await runCli(args, s.home, { env: w.env });
    expect(finished.code, finished.stdout + finished.stderr).toBe(0);
    await paidOnce(w, title, before, finished.json());
  });

  // Killed once the submit was signed (journaled, not sent), then the 30 minutes pass: those bytes can no longer pay
  // (the registry refuses a submit past the reservation's end). Before, the rerun sent them, they reverted, and every
  // later rerun stopped at transaction_reverted: the ask could never finish. Now they go with the expired reservation,
  // and the run cancels, reserves and submits anew. The same when the bytes did reach the chain after the end (here
  // the test sends them itself) and reverted while the journal still said signed.
  it.each([
    ['never sent', false],
    ['sent after the end and reverted, the journal still saying signed', true],
  ])('killed after its submit was signed (%s), resumed past the 30 minutes: finishes, paid once', async (_what, sentLate) => {
    const w = await freshWallet();
    const before = await w.usdcOf();
    const { title, args } = await stoppedAfterReservation(w, 'ask:signed:2');
    const [op] = recordedOfKind(s.home, 'ask').filter((o) => o.txs.some((t) => t.status === 'signed' && t.calls.includes(2) && t.raw));
    const doomed = op!.txs.find((t) => t.calls.includes(2))!;
    if (sentLate) {
      await s.pub.sendRawTransaction({ serializedTransaction: doomed.raw });
      expect((await s.pub.waitForTransactionReceipt({ hash: doomed.hash })).status).toBe('reverted');
    }
    const resumed = await runCli(args, s.home, { env: w.env });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    await paidOnce(w, title, before, resumed.json());
    const after = recordedOfKind(s.home, 'ask').find((o) => o.id === op!.id)!;
    expect(after.txs.find((t) => t.hash === doomed.hash)).toMatchObject({ stage: 'ask:expired-reservation', status: 'reverted' });
  });

  // A journal that does not know the submit (here a copy of the state folder taken before it; a record set aside on a
  // lying node's word is another way): the reservation was consumed, so the registry will not cancel it. The old way
  // reserved again (the consumed slot was free), then stopped at the submit with a misleading approval_replaced; on the
  // live chain, where the approval might still cover it, only the question key's once-per-chain rule stood between
  // that and a second bounty.
  it('a journal that missed the submit, resumed past the 30 minutes: the cancel would revert, the run says a submission consumed the reservation, naming it, and pays nothing again', async () => {
    const w = await freshWallet();
    const before = await w.usdcOf();
    const { title, args } = await stoppedAfterReservation(w, 'ask:mined:1', false);
    const copy = makeHome();
    for (const dir of ['state', 'config']) {
      const from = path.join(s.home.dir, dir);
      if (existsSync(from)) cpSync(from, path.join(copy.dir, dir), { recursive: true });
    }
    // The original journal goes on: its submit is mined (the service not yet told), consuming the reservation.
    const submitted = await runCli(args, s.home, { env: { ...w.env, LOOPSIGN_CRASH_AFTER: 'ask:mined:2' } });
    expect(submitted.code, submitted.stderr).toBe(-1);
    expect(before - (await w.usdcOf()), 'the bounty').toBe(1_500_000n);
    const [submission] = await s.pub.getLogs({
      address: s.sb.info.contracts.contentRegistry!,
      event: parseAbiItem(
        'event ContentSubmitted(uint256 indexed contentId, address indexed submitter, bytes32 contentHash, string url, string title, string tags, uint256 indexed categoryId)',
      ),
      args: { submitter: w.address },
      fromBlock: 0n,
    });
    await s.sb.control('/__sandbox/time', { advanceSeconds: PAST_EXPIRY });
    const stale = await runCli(args, copy, { env: w.env });
    expect(stale.code, stale.stdout + stale.stderr).toBe(4);
    const error = stale.json().error;
    expect(error.code).toBe('reservation_not_cancelled');
    expect(error.message).toMatch(/a submission of this very question from this wallet consumed it/);
    expect(error.message).toContain(submission!.transactionHash);
    expect(error.consumedBy).toEqual({
      transactionHash: submission!.transactionHash,
      contentIds: [String(submission!.args.contentId)],
    });
    expect(before - (await w.usdcOf()), 'nothing paid again').toBe(1_500_000n);
    expect(await submissionsTitled(s, title, w.address)).toBe(1);
    // The journal that knows the submit finishes the ask: the bonus once.
    const finished = await runCli(args, s.home, { env: w.env });
    expect(finished.code, finished.stdout + finished.stderr).toBe(0);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, once each').toBe(2_500_000n);
  });
});
