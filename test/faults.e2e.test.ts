// A stalled RPC, as a user meets it: a node that accepts the connection and never answers. loopsign gives up
// after the configured RPC timeout with exit 4 and one clear line; when the stall hits right after a transaction
// reached the chain, rerunning the same command against a healthy node finishes the ask with exactly one
// submission and one payment; so does a connection dropped right after the send (viem never resends a raw
// transaction itself), and when, on the rerun, the node fails its reads of transactions and calls the resent bytes'
// nonce used, or its reads lag one transaction behind; and when, paid, the node fails its receipt reads or answers
// none for transactions it gave the receipts of; and when a node whose pending nonce lags one behind gave out a
// nonce the wallet's last ask already used, the authorization's nonce of an EIP-7702 batch included. A node that fails
// a gas estimate or an atomic
// simulation is the RPC failing (exit 4), not a revert. (429, 5xx, service timeouts and connection resets:
// http-client.test.ts, ask.e2e.)
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, encodeFunctionData, http, keccak256, parseAbi, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli } from './helpers/cli.js';
import { openSession, submissionsTitled as titled, tokenBalance, type Session } from './helpers/chain.js';
import { startStallProxy, type StallMode } from './helpers/stall-proxy.js';
import { recorded, recordedOfKind } from './helpers/store.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

const usdc = () => tokenBalance(s, 'USDC');
const submissionsTitled = (title: string, submitter?: Hex) => titled(s, title, submitter);
function askFile(title: string): string {
  return s.home.file(
    `${title.replace(/\W+/g, '-')}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `${title.replace(/\W+/g, '-')}-${Date.now()}`,
      maxPaymentAmount: '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title, contextUrl: 'https://example.com/stall', categoryId: '1', tags: ['stall'] },
    }),
  );
}

/** The same ask run again, against the sandbox itself: it finishes, one submission with its title, paid once. */
async function rerunPaysOnce(file: string, title: string, before: bigint): Promise<void> {
  const resumed = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], s.home, { env: s.sb.env() });
  expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
  expect(resumed.json().status).toBe('submitted');
  expect(await submissionsTitled(title)).toBe(1);
  expect(await usdc()).toBe(before - 1_500_000n);
}

/** An ask (wallet_calls) through a proxy in `mode` in front of the sandbox's node, closed once the run is over. */
async function askThrough(mode: StallMode, title: string, env: Record<string, string> = {}, flags: string[] = []) {
  const file = askFile(title);
  const proxy = await startStallProxy(s.sb.info.rpcUrl, mode);
  const before = await usdc();
  try {
    const r = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--rpc-url', proxy.url, ...flags], s.home, {
      env: { ...s.sb.env(), ...env },
    });
    return { r, proxy, file, before };
  } finally {
    await proxy.close();
  }
}

describe('a stalled RPC', () => {
  it('that never answers: exit 4 after the configured timeout, one clear line, nothing paid', async () => {
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'stall');
    try {
      const before = await usdc();
      const r = await runCli(['--json', 'ask', '--file', askFile('Stalled from the start'), '--rpc-url', proxy.url], s.home, {
        env: { ...s.sb.env(), LOOPSIGN_RPC_TIMEOUT_MS: '400' },
      });
      expect(r.code, r.stderr).toBe(4);
      const err = r.json().error;
      expect(err.code).toBe('rpc_unreachable');
      expect(err.message).toMatch(/did not answer eth_chainId/);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace without --debug
      expect(await usdc()).toBe(before);
    } finally {
      await proxy.close();
    }
  });

  it('right after a transaction reached the chain: exit 4, then a rerun on a healthy node pays once', async () => {
    const title = `Stalled after send ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('stall-after-send', title, { LOOPSIGN_RPC_TIMEOUT_MS: '400' });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('broadcast_failed');
    expect(r.json().error.hint).toMatch(/journaled; run the same command again/);
    expect(proxy.forwarded).toContain('eth_sendRawTransaction');
    await rerunPaysOnce(file, title, before);
  });

  it('a connection dropped right after the transaction reached the chain: exit 4 (not sent again, nor signed anew), then a rerun pays once', async () => {
    const title = `Reset after send ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('reset-after-send', title);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('broadcast_failed');
    // Why, in words (viem's "HTTP request failed." alone said nothing).
    expect(r.json().error.message).toMatch(/HTTP request failed: socket hang up/);
    expect(proxy.sent).toHaveLength(1);
    await rerunPaysOnce(file, title, before);
  });

  // A paid ask's journaled transaction resumed through a node in `mode`, which answers its resend "nonce too low":
  // exit 4 broadcast_failed (it may be that very transaction), never "paid nothing"; then a rerun on a healthy node
  // pays once.
  const resumeRefusedAsUnknown = async (mode: StallMode, file: string, title: string, before: bigint) => {
    const proxy = await startStallProxy(s.sb.info.rpcUrl, mode);
    try {
      const r = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--rpc-url', proxy.url], s.home, {
        env: s.sb.env(),
      });
      expect(proxy.forwarded).toContain('eth_sendRawTransaction');
      expect(r.code, r.stdout + r.stderr).toBe(4);
      const err = r.json().error;
      expect(err.code).toBe('broadcast_failed');
      expect(err.message).not.toMatch(/paid nothing|can never be mined/);
      expect(err.hint).toMatch(/journaled/);
    } finally {
      await proxy.close();
    }
    await rerunPaysOnce(file, title, before);
  };

  it('a resumed transaction the node calls "nonce too low" while its reads of transactions fail: exit 4 broadcast_failed (it may be that very transaction), never "paid nothing"; a rerun on a healthy node pays once', async () => {
    const title = `Reads fail on resume ${Date.now()}`;
    const first = await askThrough('reset-after-send', title);
    expect(first.r.json().error.code, first.r.stdout).toBe('broadcast_failed');
    // The transaction is mined; on resume the node cannot say so (its receipt and transaction reads fail), so the same
    // bytes go out again and the node answers "nonce too low": its own nonce, taken by itself.
    await resumeRefusedAsUnknown('tx-reads-fail', first.file, title, first.before);
  });

  it('a resumed transaction the node calls "nonce too low" while its reads lag one transaction behind (null for that transaction, the nonce before it): exit 4 broadcast_failed, never "paid nothing"; a rerun on a healthy node pays once', async () => {
    const title = `Reads lag on resume ${Date.now()}`;
    const first = await askThrough('reset-after-send', title);
    expect(first.r.json().error.code, first.r.stdout).toBe('broadcast_failed');
    // The transaction is mined, but the backend that answers reads has not seen it: no such transaction, and the
    // wallet's nonce not used yet. Only the node that takes transactions knows ("nonce too low"): a lagging backend's
    // "not found" is no proof that another transaction took the nonce.
    await resumeRefusedAsUnknown('reads-lag-one-tx', first.file, title, first.before);
  });

  it('a node that fails its receipt reads once the transactions are mined: after paying, exit 4 (the RPC failed), not a refusal that nothing proves the submission; a rerun pays nothing more', async () => {
    const title = `Receipts fail once mined ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('receipts-fail-once-mined', title);
    expect(proxy.forwarded).toContain('eth_getTransactionReceipt (failed)');
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('rpc_failed');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    await rerunPaysOnce(file, title, before);
  });

  it('a node whose reads lag behind and answer no receipt for transactions it already gave the receipts of: after paying, exit 4 (the RPC failed), not a refusal that nothing proves the submission; a rerun pays nothing more', async () => {
    const title = `Receipts null once mined ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('receipts-null-once-mined', title);
    expect(proxy.forwarded).toContain('eth_getTransactionReceipt (null)');
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('rpc_failed');
    expect(r.json().error.message).not.toMatch(/refused|nothing was signed/);
    await rerunPaysOnce(file, title, before);
  });

  it('a node that fails the gas estimate of a plan call: exit 4 rpc_failed (the RPC failed), not "would revert"; nothing paid', async () => {
    const title = `Estimate fails ${Date.now()}`;
    const { r, proxy, before } = await askThrough('simulations-fail', title);
    expect(proxy.forwarded).toContain('eth_estimateGas (failed)');
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error.code).toBe('rpc_failed');
    expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
    expect(await usdc()).toBe(before);
  });

  it('a node that fails the simulation of an atomic plan: exit 4 rpc_failed, not the refusal (exit 5) that the batch would revert; nothing paid', async () => {
    await s.sb.control('/__sandbox/settings', { atomicPlans: true });
    try {
      const title = `Atomic simulation fails ${Date.now()}`;
      const { r, proxy, before } = await askThrough('simulations-fail', title, {}, ['--atomic']);
      expect(proxy.forwarded).toContain('eth_call (failed)');
      expect(r.code, r.stdout + r.stderr).toBe(4);
      expect(r.json().error.code).toBe('rpc_failed');
      expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
      expect(await usdc()).toBe(before);
    } finally {
      await s.sb.control('/__sandbox/settings', { atomicPlans: false });
    }
  });

  it('a node whose gas estimate is an error naming no revert (a rate limit): exit 4 rpc_failed, not "would revert"; nothing paid', async () => {
    const title = `Estimate limited ${Date.now()}`;
    const { r, proxy, before } = await askThrough('simulations-rpc-error', title);
    expect(proxy.forwarded).toContain('eth_estimateGas (failed)');
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error).toMatchObject({ code: 'rpc_failed', message: expect.stringMatching(/limit exceeded \(test\)/) });
    expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
    expect(await usdc()).toBe(before);
  });

  it('an atomic plan whose simulation the node answers with an error naming no revert: exit 4 rpc_failed, not the refusal (exit 5); nothing paid', async () => {
    await s.sb.control('/__sandbox/settings', { atomicPlans: true });
    try {
      const { r, proxy, before } = await askThrough('simulations-rpc-error', `Atomic simulation limited ${Date.now()}`, {}, ['--atomic']);
      expect(proxy.forwarded).toContain('eth_call (failed)');
      expect(r.code, r.stdout + r.stderr).toBe(4);
      expect(r.json().error).toMatchObject({ code: 'rpc_failed', message: expect.stringMatching(/limit exceeded \(test\)/) });
      expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
      expect(await usdc()).toBe(before);
    } finally {
      await s.sb.control('/__sandbox/settings', { atomicPlans: false });
    }
  });

  it('a node whose gas estimate is not hex: exit 4 rpc_bad_answer naming the read, not an internal error; nothing paid', async () => {
    const { r, proxy, before } = await askThrough('estimates-garbage', `Estimate garbage ${Date.now()}`);
    expect(proxy.forwarded).toContain('eth_estimateGas (garbage)');
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.json().error).toMatchObject({
      code: 'rpc_bad_answer',
      message: "the RPC's answer to estimateGas cannot be read: Cannot convert 0xzz to a BigInt",
    });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
    expect(await usdc()).toBe(before);
  });

  it("a node that lied about block 0 when the ask first met it: the rerun on an honest node finds the journal's transactions where they were mined and resumes (no journal_other_chain), paying once", async () => {
    const title = `Genesis lie ${Date.now()}`;
    // The lie is recorded as the ask's chain instance; the reservation is paid on the real chain, then the run stops.
    const { r, proxy, file, before } = await askThrough('genesis-lies', title, { LOOPSIGN_CRASH_AFTER: 'ask:mined:0' });
    expect(r.code, r.stdout + r.stderr).toBe(-1);
    expect(proxy.forwarded).toContain('eth_sendRawTransaction');
    // Rerun with --set-aside-stale, as an agent that always passes it would: a journal whose transactions are on this
    // chain is not another instance's, so it is not set aside (which would ask afresh beside what was paid).
    const resumed = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--set-aside-stale'], s.home, {
      env: s.sb.env(),
    });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/kept as/);
    expect(resumed.json()).toMatchObject({ status: 'submitted', resumed: true });
    expect(await submissionsTitled(title)).toBe(1);
    expect(await usdc()).toBe(before - 1_500_000n);
  });

  it('a node that fails its reads of the latest block: exit 4 rpc_failed in one line (not a loopsign bug), nothing paid; a rerun on a healthy node pays once', async () => {
    const title = `Failing reads ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('latest-fails', title);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const err = r.json().error;
    expect(err.code).toBe('rpc_failed');
    expect(err.message).toMatch(/^a request to the RPC failed: .*the node is overloaded \(test\)/);
    expect(err.message).not.toMatch(/\n/);
    expect(err.hint).toMatch(/journaled/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(proxy.forwarded).toContain('eth_getBlockByNumber (failed)');
    expect(proxy.forwarded).not.toContain('eth_sendRawTransaction');
    expect(await usdc()).toBe(before);
    await rerunPaysOnce(file, title, before);
  });

  it('a node answering empty receipt reads while the transaction is mined: the wait goes on (as for a receipt not there yet), paid once', async () => {
    const title = `Empty receipts ${Date.now()}`;
    const { r, proxy, file, before } = await askThrough('receipts-empty-after-send', title);
    expect(proxy.forwarded.filter((m) => m === 'eth_getTransactionReceipt (empty)')).toHaveLength(6);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().status).toBe('submitted');
    expect(await submissionsTitled(title)).toBe(1);
    expect(await usdc()).toBe(before - 1_500_000n);
  });

  it('an RPC timeout that is not a positive number of milliseconds is a usage error', async () => {
    const r = await runCli(['--json', 'config', 'show'], s.home, { env: { ...s.sb.env(), LOOPSIGN_RPC_TIMEOUT_MS: 'soon' } });
    expect(r.code).toBe(2);
    expect(r.json().error.message).toMatch(/RPC timeout \(from env\): "soon"/);
  });
});

describe('a node whose pending nonce lags one behind', () => {
  const erc20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

  // A wallet of its own, funded, never delegated: its first --atomic batch carries an EIP-7702 authorization.
  async function freshWallet() {
    const key = `0x${randomBytes(32).toString('hex')}` as Hex;
    registerSecret(key);
    const address = privateKeyToAccount(key).address;
    await s.sb.control('/__sandbox/fund', { address, usdc: '10000000', lrep: '10000000', eth: '10' });
    const env = { ...s.sb.env(), LOOPSIGN_KEYSTORE: undefined, LOOPSIGN_PASSWORD_FILE: undefined, LOOPSIGN_PRIVATE_KEY: key };
    const balanceOf = (token: 'USDC' | 'LREP') => () =>
      s.pub.readContract({ address: s.sb.info.tokens[token].address, abi: erc20, functionName: 'balanceOf', args: [address] });
    return { key, address, env, usdcOf: balanceOf('USDC'), lrepOf: balanceOf('LREP') };
  }

  /** An --atomic ask of the wallet, mined: its first batch delegates the wallet (a type-4 transaction, two nonces). */
  async function atomicAsk(w: Awaited<ReturnType<typeof freshWallet>>) {
    const r = await runCli(
      ['--json', 'ask', '--file', askFile(`Delegating ask ${Date.now()}`), '--payment-mode', 'wallet_calls', '--atomic'],
      s.home,
      {
        env: w.env,
      },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(recorded(s.home, r.json().operation).txs.map((t) => t.kind)).toContain('batch+authorization');
  }

  // One ask of a fresh wallet, mined (ordered, or --atomic: its approval and submit one self-executed type-4 transaction
  // with nonce n whose authorization is signed for n + 1, so the wallet's next nonce is n + 2). Then another ask through
  // a node that gives out the pending nonce one behind: a nonce the first ask's last transaction used. Signed and sent
  // with it, that ask's reservation can never be mined: the run finds that nonce taken by a mined transaction loopsign
  // journaled, sets the reservation aside and says so (stale_nonce), whether the nonce was a transaction's own or its
  // authorization's. Its rerun on a healthy node signs the reservation again and pays once.
  it.each([
    ['an ordered ask', false],
    ['an --atomic ask that delegated the wallet (its authorization took the nonce after its own)', true],
  ])('after %s: the next ask signed with a used nonce is signed again on its rerun, and paid once', async (_what, atomic) => {
    const w = await freshWallet();
    const title = `Pending one behind ${atomic ? 'atomic' : 'ordered'} ${Date.now()}`;
    const args = (file: string) => ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', ...(atomic ? ['--atomic'] : [])];
    const before = await w.usdcOf();
    const first = await runCli(args(askFile(`${title} first`)), s.home, { env: w.env });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const kinds = recorded(s.home, first.json().operation).txs.map((t) => t.kind);
    expect(kinds).toContain(atomic ? 'batch+authorization' : 'call');
    if (!atomic) expect(kinds).not.toContain('batch+authorization');

    const file = askFile(title);
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'pending-count-one-behind');
    try {
      const lagged = await runCli([...args(file), '--rpc-url', proxy.url], s.home, { env: w.env });
      expect(proxy.forwarded).toContain('eth_getTransactionCount (one behind)');
      expect(lagged.code, lagged.stdout + lagged.stderr).toBe(4);
      // The node gave out a nonce a journaled transaction used: said so, the bytes set aside (not "another
      // transaction, not one loopsign journaled; a new clientRequestId").
      expect(lagged.json().error).toMatchObject({ code: 'stale_nonce', hint: expect.stringMatching(/run the same command again/) });
    } finally {
      await proxy.close();
    }
    expect(await w.usdcOf(), 'the lagged run paid nothing').toBe(before - 1_500_000n);

    const rerun = await runCli(args(file), s.home, { env: w.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().status).toBe('submitted');
    // Set aside by the lagged run itself, never sent again: the reservation signed anew with the node's nonce.
    expect(rerun.stderr).not.toContain('re-broadcasting');
    const statuses = recorded(s.home, rerun.json().operation).txs.map((t) => t.status);
    expect(statuses[0]).toBe('dropped');
    expect(statuses.slice(1).every((st) => st === 'mined')).toBe(true);
    expect(await submissionsTitled(title, w.address)).toBe(1);
    expect(await w.usdcOf(), 'two bounties, each once').toBe(before - 3_000_000n);
    const again = await runCli(args(file), s.home, { env: w.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await w.usdcOf(), 'still two bounties').toBe(before - 3_000_000n);
  });

  it('a reorg then mines the bytes a lagged run set aside (a bonus pool call): the rerun counts them and funds no second pool', async () => {
    const w = await freshWallet();
    const escrow = s.sb.info.contracts.feedbackBonusEscrow!;
    // An allowance to the trusted bonus escrow that an earlier payment left, so the pool call can pay without the
    // approval that the reorg takes away.
    const outside = createWalletClient({ account: privateKeyToAccount(w.key), transport: http(s.sb.info.rpcUrl) });
    const approve = encodeFunctionData({ abi: parseAbi(['function approve(address,uint256)']), args: [escrow, 5_000_000n] });
    await s.pub.waitForTransactionReceipt({
      hash: await outside.sendTransaction({ chain: null, to: s.sb.info.tokens.USDC.address, data: approve }),
    });
    const file = s.home.file(
      `bonus-reorg-${Date.now()}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `bonus-reorg-${Date.now()}`,
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        question: { title: `Bonus reorg ${Date.now()}`, contextUrl: 'https://example.com/stall', categoryId: '1', tags: ['stall'] },
      }),
    );
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const before = await w.usdcOf();
    // A node whose pending count lags one behind once, after the bonus's approval went out (the 4th transaction:
    // reservation, approval, submit, bonus approval): the pool call is signed with the approval's nonce.
    let sends = 0;
    let lag = false;
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const asked = JSON.parse(body) as { method: string; params: unknown[] };
      if (asked.method === 'eth_sendRawTransaction' && ++sends === 4) lag = true;
      const answer = (await (
        await fetch(s.sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      ).json()) as { result?: Hex };
      if (lag && asked.method === 'eth_getTransactionCount' && asked.params[1] === 'pending' && answer.result) {
        lag = false;
        answer.result = toHex(BigInt(answer.result) - 1n);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const lagged = await runCli([...args, '--rpc-url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`], s.home, {
        env: w.env,
      });
      expect(lagged.code, lagged.stdout + lagged.stderr).toBe(4);
      expect(lagged.json().error.code).toBe('stale_nonce');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    const [op] = recordedOfKind(s.home, 'ask').filter((o) => o.txs.some((t) => t.stage === 'bonus' && t.status === 'dropped'));
    const bonus = op!.txs.filter((t) => t.stage === 'bonus');
    expect(bonus.map((t) => t.status)).toEqual(['mined', 'dropped']);
    const [taker, pool] = bonus as [(typeof bonus)[0], (typeof bonus)[0]];
    // The chain reorganises: the block of the bonus approval is replaced by one holding the set-aside pool call.
    const takerBlock = (await s.pub.getTransactionReceipt({ hash: taker.hash })).blockNumber;
    const depth = Number((await s.pub.getBlockNumber()) - takerBlock + 1n);
    const reorg = (await (
      await fetch(s.sb.info.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_reorg', params: [depth, [[pool.raw, 0]]] }),
      })
    ).json()) as { error?: unknown };
    expect(reorg.error).toBeUndefined();
    expect((await s.pub.getTransactionReceipt({ hash: pool.hash })).status).toBe('success');
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_500_000n);

    const rerun = await runCli(args, s.home, { env: w.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().feedbackBonus.status).toBe('funded');
    // Before, the rerun found the approval gone, dropped it (its nonce taken by the pool call, mined), and signed the
    // approval and the pool call again: a second pool, 3.5 USDC for an ask whose file allows 2.5.
    expect(before - (await w.usdcOf()), 'still the bounty and the bonus, each once').toBe(2_500_000n);
    expect(recorded(s.home, op!.id).txs.find((t) => t.hash === pool.hash)?.status).toBe('mined');
  });

  it('a node that lies its way to a set-aside (nonce too low, no such transaction, a forged receipt for a journaled taker) while it forwarded the bytes: the honest rerun finds them mined and does not sign them again', async () => {
    const w = await freshWallet();
    // A journaled transaction with the nonce the ask will get, never sent: a vote killed once its approval was signed.
    const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
    const vote = await runCli(['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', '1'], s.home, {
      env: { ...w.env, LOOPSIGN_CRASH_AFTER: 'rate:1:signed:0' },
    });
    expect(vote.code, vote.stdout + vote.stderr).toBe(-1);
    const [taker] = recordedOfKind(s.home, 'rate').flatMap((o) => o.txs.filter((t) => t.status === 'signed'));
    let sent: Hex | undefined;
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const asked = JSON.parse(body) as { id: number; method: string; params: string[] };
      const node = async (b: string) =>
        (await (await fetch(s.sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b })).json()) as {
          result?: Record<string, unknown>;
        };
      const reply = (o: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      // The first transaction goes to the chain, and the node says its nonce is used; then that it has no such
      // transaction, and gives the chain's receipt of it as the journaled vote approval's.
      if (asked.method === 'eth_sendRawTransaction' && !sent) {
        sent = keccak256(asked.params[0] as Hex);
        await node(body);
        return reply({ jsonrpc: '2.0', id: asked.id, error: { code: -32000, message: 'nonce too low' } });
      }
      if (asked.method === 'eth_getTransactionByHash' && asked.params[0]?.toLowerCase() === sent)
        return reply({ jsonrpc: '2.0', id: asked.id, result: null });
      if (asked.method === 'eth_getTransactionReceipt' && sent && asked.params[0]?.toLowerCase() === taker!.hash.toLowerCase()) {
        const real = await node(JSON.stringify({ jsonrpc: '2.0', id: asked.id, method: 'eth_getTransactionReceipt', params: [sent] }));
        return reply({ jsonrpc: '2.0', id: asked.id, result: { ...real.result, transactionHash: taker!.hash } });
      }
      reply(await node(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const file = askFile(`Forged taker ${Date.now()}`);
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const before = await w.usdcOf();
    try {
      const lied = await runCli([...args, '--rpc-url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`], s.home, {
        env: w.env,
      });
      expect(lied.code, lied.stdout + lied.stderr).toBe(4);
      expect(lied.json().error.code).toBe('stale_nonce');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect((await s.pub.getTransactionReceipt({ hash: sent! })).status, 'the set-aside reservation is mined').toBe('success');
    // Before, the rerun signed the reservation again, which the registry refused (AlreadyReserved): call_would_revert,
    // on every rerun.
    const rerun = await runCli(args, s.home, { env: w.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/"event":"tx\.revived"/);
    expect(await w.usdcOf(), 'one bounty').toBe(before - 1_500_000n);
    const ask = recordedOfKind(s.home, 'ask').find((o) => o.txs.some((t) => t.hash.toLowerCase() === sent));
    expect(ask!.txs.map((t) => t.status)).toEqual(['mined', 'mined', 'mined']);
  });

  it("after an --atomic ask that delegated the wallet: a vote whose approval was signed with the authorization's nonce is planned again on its rerun, and its stake paid once", async () => {
    // A vote settles what it journaled before it plans (Executor.settleJournaled): the approval signed with the used
    // nonce must be found dropped there. A vote has no clientRequestId to change: stuck there, it could never be cast.
    const w = await freshWallet();
    await atomicAsk(w);
    const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
    const args = ['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', '1'];
    const before = await w.lrepOf();
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'pending-count-one-behind');
    try {
      const lagged = await runCli([...args, '--rpc-url', proxy.url], s.home, { env: w.env });
      expect(proxy.forwarded).toContain('eth_getTransactionCount (one behind)');
      expect(lagged.code, lagged.stdout + lagged.stderr).toBe(4);
      // The node gave out a nonce a journaled transaction used: said so, the bytes set aside (not "another
      // transaction, not one loopsign journaled; a new clientRequestId").
      expect(lagged.json().error).toMatchObject({ code: 'stale_nonce', hint: expect.stringMatching(/run the same command again/) });
    } finally {
      await proxy.close();
    }
    expect(await w.lrepOf(), 'the lagged run paid nothing').toBe(before);
    for (const attempt of [1, 2]) {
      const rerun = await runCli(args, s.home, { env: w.env });
      expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
      expect(before - (await w.lrepOf()), `rerun ${attempt}: one stake`).toBe(1_000_000n);
    }
  });
});
