import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { fundedWallet, openSession, submissionsTitled as titled, tokenBalance, type Session } from './helpers/chain.js';
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
      question: {
        title,
        contextUrl: `https://example.com/stall/${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
        categoryId: '1',
        tags: ['stall'],
      },
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
  // A wallet of its own, funded, never delegated: its first --atomic batch carries an EIP-7702 authorization.
  const freshWallet = () => fundedWallet(s.sb, s.pub);

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
  // a node that gives out the pending nonce one behind: a nonce the first ask's last transaction used. Before nonce
  // slots (issue 35) that ask's reservation was signed with it, could never be mined, and was set aside (stale_nonce,
  // exit 4) for a rerun to sign again. loopsign now allocates past every slot it journaled: the lagging count is never
  // signed, and the ask pays once in one run.
  it.each([
    ['an ordered ask', false],
    ['an --atomic ask that delegated the wallet (its authorization took the nonce after its own)', true],
  ])(
    'after %s: the next ask through a node whose pending count lags is signed past the journaled slots, and paid once in one run',
    async (_what, atomic) => {
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
        expect(lagged.code, lagged.stdout + lagged.stderr).toBe(0);
        expect(lagged.json().status).toBe('submitted');
        const statuses = recorded(s.home, lagged.json().operation).txs.map((t) => t.status);
        expect(statuses.every((st) => st === 'mined')).toBe(true);
      } finally {
        await proxy.close();
      }
      expect(await submissionsTitled(title, w.address)).toBe(1);
      expect(await w.usdcOf(), 'two bounties, each once').toBe(before - 3_000_000n);
      const again = await runCli(args(file), s.home, { env: w.env });
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(await w.usdcOf(), 'still two bounties').toBe(before - 3_000_000n);
    },
  );

  // The one way calls reach a new nonce (issue 35): their slot is void, its nonce used in the FINALIZED chain by none of
  // its versions. A bonus pool call killed after signing, its nonce then taken by software outside loopsign: the rerun
  // signs nothing while that is not final (a reorg could still mine the pool call's bytes in the taker's place: signed
  // again meanwhile, two pools), and once it is, signs the pool call anew and funds one pool. Before, every rerun said
  // nonce_used_elsewhere ("ask again with a new clientRequestId"): the bonus could never be funded.
  it('a pool call whose nonce outside software took: no new nonce before that is final, then funded once', async () => {
    const w = await freshWallet();
    const stamp = Date.now();
    const file = s.home.file(
      `bonus-taken-${stamp}.json`,
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `bonus-taken-${stamp}`,
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        question: { title: `Bonus taken ${stamp}`, contextUrl: 'https://example.com/stall', categoryId: '1', tags: ['stall'] },
      }),
    );
    const args = ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'];
    const before = await w.usdcOf();
    const killed = await runCli(args, s.home, { env: { ...w.env, LOOPSIGN_CRASH_AFTER: 'bonus:signed:1' } });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    const [op] = recordedOfKind(s.home, 'ask').filter((o) => o.txs.some((t) => t.stage === 'bonus' && t.status === 'signed'));
    const pool = op!.txs.find((t) => t.stage === 'bonus' && t.status === 'signed')!;
    // Outside software sends with the pool call's nonce.
    const outside = createWalletClient({ account: privateKeyToAccount(w.key), transport: http(s.sb.info.rpcUrl) });
    await s.pub.waitForTransactionReceipt({
      hash: await outside.sendTransaction({ chain: null, to: w.address, value: 0n, nonce: pool.nonce }),
    });
    for (const attempt of [1, 2]) {
      const early = await runCli(args, s.home, { env: w.env });
      expect(early.code, `rerun ${attempt}: ${early.stdout}${early.stderr}`).toBe(4);
      expect(early.json().error).toMatchObject({
        code: 'nonce_not_final',
        nonce: pool.nonce,
        finalAtBlock: expect.any(String),
        retryAfterSeconds: expect.any(Number),
      });
      expect(before - (await w.usdcOf()), `rerun ${attempt}: the bounty only`).toBe(1_500_000n);
      expect(
        recorded(s.home, op!.id)
          .txs.filter((t) => t.stage === 'bonus')
          .map((t) => t.status),
      ).toEqual(['mined', 'signed']);
    }
    // Two more blocks: the sandbox's finalized block (two behind the head) passes the taker.
    for (let i = 0; i < 2; i++)
      await fetch(s.sb.info.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
      });
    const rerun = await runCli(args, s.home, { env: w.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().feedbackBonus.status).toBe('funded');
    expect(rerun.stderr).toMatch(/"event":"tx\.void"/);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_500_000n);
    const bonus = recorded(s.home, op!.id).txs.filter((t) => t.stage === 'bonus');
    expect(bonus.map((t) => t.status)).toEqual(['mined', 'dropped', 'mined']);
    const again = await runCli(args, s.home, { env: w.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(before - (await w.usdcOf()), 'still each once').toBe(2_500_000n);
  });

  // A vote killed once its approval was signed (never sent) leaves a gap at that nonce; an ask of the same wallet then
  // runs through a node that lies about the transaction that fills it (it forwards it, then says "nonce too low" and
  // knows no such transaction, and forges a receipt for the vote's approval). Before slots the ask's reservation took
  // that nonce, was set aside on the lie, and its rerun revived it. Now the ask fills the gap with a cancel of the
  // vote's slot (a version of it: only one can be mined), pays once in one run, and the vote's rerun finds its slot
  // taken by the cancel and, that being final, casts its stake anew, once.
  it('a gap a killed vote left is cancelled, not taken, by the next ask (even through a lying node): each pays once', async () => {
    const w = await freshWallet();
    const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
    const voteArgs = ['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', '1'];
    const vote = await runCli(voteArgs, s.home, { env: { ...w.env, LOOPSIGN_CRASH_AFTER: 'rate:1:signed:0' } });
    expect(vote.code, vote.stdout + vote.stderr).toBe(-1);
    const [gap] = recordedOfKind(s.home, 'rate').flatMap((o) => o.txs.filter((t) => t.status === 'signed'));
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
      if (asked.method === 'eth_sendRawTransaction' && !sent) {
        sent = keccak256(asked.params[0] as Hex);
        await node(body);
        return reply({ jsonrpc: '2.0', id: asked.id, error: { code: -32000, message: 'nonce too low' } });
      }
      if (asked.method === 'eth_getTransactionByHash' && asked.params[0]?.toLowerCase() === sent)
        return reply({ jsonrpc: '2.0', id: asked.id, result: null });
      if (asked.method === 'eth_getTransactionReceipt' && sent && asked.params[0]?.toLowerCase() === gap!.hash.toLowerCase()) {
        const real = await node(JSON.stringify({ jsonrpc: '2.0', id: asked.id, method: 'eth_getTransactionReceipt', params: [sent] }));
        return reply({ jsonrpc: '2.0', id: asked.id, result: { ...real.result, transactionHash: gap!.hash } });
      }
      reply(await node(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const title = `Gap cancelled ${Date.now()}`;
    const args = ['--json', 'ask', '--file', askFile(title), '--payment-mode', 'wallet_calls'];
    const usdcBefore = await w.usdcOf();
    const lrepBefore = await w.lrepOf();
    try {
      const ask = await runCli([...args, '--rpc-url', `http://127.0.0.1:${(server.address() as AddressInfo).port}`], s.home, {
        env: w.env,
      });
      expect(ask.code, ask.stdout + ask.stderr).toBe(0);
      expect(ask.stderr).toMatch(/"event":"tx\.cancel"/);
      // The ask's own transactions are all past the gap.
      const mine = recorded(s.home, ask.json().operation).txs;
      expect(mine.every((t) => t.nonce > gap!.nonce && t.status === 'mined')).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    expect((await s.pub.getTransactionReceipt({ hash: sent! })).to?.toLowerCase(), 'the cancel filled the gap').toBe(
      w.address.toLowerCase(),
    );
    expect(await submissionsTitled(title, w.address)).toBe(1);
    expect(await w.usdcOf(), 'one bounty').toBe(usdcBefore - 1_500_000n);
    expect(await w.lrepOf(), 'no stake yet').toBe(lrepBefore);
    const rerun = await runCli(voteArgs, s.home, { env: w.env });
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(await w.lrepOf(), 'one stake').toBe(lrepBefore - 1_000_000n);
    const again = await runCli(voteArgs, s.home, { env: w.env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await w.lrepOf(), 'still one stake').toBe(lrepBefore - 1_000_000n);
  });

  it("after an --atomic ask that delegated the wallet: a vote through a node whose pending count lags one behind is signed past the authorization's nonce, and its stake paid once", async () => {
    // Before slots, the vote's approval was signed with the authorization's nonce and set aside (stale_nonce); a vote
    // has no clientRequestId to change, so its rerun had to find it dropped. Now it is never signed with that nonce.
    const w = await freshWallet();
    await atomicAsk(w);
    const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
    const args = ['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', '1'];
    const before = await w.lrepOf();
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'pending-count-one-behind');
    try {
      const lagged = await runCli([...args, '--rpc-url', proxy.url], s.home, { env: w.env });
      expect(proxy.forwarded).toContain('eth_getTransactionCount (one behind)');
      // Signed past the journaled slots (the batch's authorization holds the nonce after its own): cast in one run.
      expect(lagged.code, lagged.stdout + lagged.stderr).toBe(0);
    } finally {
      await proxy.close();
    }
    expect(before - (await w.lrepOf()), 'the lagged run: one stake').toBe(1_000_000n);
    for (const attempt of [1, 2]) {
      const rerun = await runCli(args, s.home, { env: w.env });
      expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
      expect(before - (await w.lrepOf()), `rerun ${attempt}: one stake`).toBe(1_000_000n);
    }
  });
});
