// A reorganisation on the sandbox's real anvil (issue 35: "reorg tests set a depth"). A feedback bonus pool is mined,
// then the chain drops the block it was in (anvil_rollback, depth 1) and a transaction of the same wallet that
// loopsign did not sign takes its nonce; the chain goes on until that is final. The pool paid nothing: the reorg undid
// it. The rerun must fund it once: never journal_contradicted for ever (the record was seen mined, but the block it was
// seen in is gone), never two pools.
import { createWalletClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import { anvilRpc, bonusPoolsBy, fundedWallet, openSession, type Session } from './helpers/chain.js';
import { recorded } from './helpers/store.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

function askFile(home: Home, title: string): string {
  const id = `${title.replace(/\W+/g, '-')}-${process.pid}`;
  return home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: '2000000',
      bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
      feedbackBonus: { amount: '1000000', asset: 'USDC' },
      question: { title, contextUrl: `https://example.com/reorg/${id}`, categoryId: '1', tags: ['reorg'] },
    }),
  );
}

describe('a reorganisation takes a mined payment away', () => {
  it('the bonus pool reorged out, its nonce final under a transaction loopsign did not sign: the rerun funds it once', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const before = await w.usdcOf();
    const file = askFile(home, `Reorged bonus ${Date.now()}`);
    const ask = () => runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], home, { env: w.env });
    const first = await ask();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const contentId = BigInt(first.json().contentIds[0] as string);
    const pool = recorded(home, first.json().operation)
      .txs.filter((t) => t.stage === 'bonus')
      .at(-1)!;
    expect(pool.status).toBe('mined');
    expect(BigInt(pool.blockNumber!)).toBe(await s.pub.getBlockNumber());
    expect(before - (await w.usdcOf())).toBe(2_000_000n);

    // The chain drops the pool's block; the wallet's next transaction (not loopsign's) takes the pool's nonce.
    await anvilRpc(s, 'anvil_rollback', [1]);
    expect(await s.pub.getTransactionCount({ address: w.address })).toBe(pool.nonce);
    expect(before - (await w.usdcOf()), 'the reorg undid the pool').toBe(1_000_000n);
    const other = createWalletClient({ account: w.account, transport: http(s.sb.info.rpcUrl) });
    const foreign = await other.sendTransaction({ chain: null, to: w.address, value: 0n, nonce: pool.nonce });
    await s.pub.waitForTransactionReceipt({ hash: foreign });
    await anvilRpc(s, 'anvil_mine', ['0x3']); // past the sandbox's finalized block (head − 2)

    const rerun = await ask();
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/"event":"tx\.void"/);
    expect(await bonusPoolsBy(s, w.address, contentId)).toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
    const again = recorded(home, first.json().operation).txs.filter((t) => t.stage === 'bonus');
    expect(again.find((t) => t.hash === pool.hash)?.status).toBe('dropped');
    expect(again.filter((t) => t.status === 'mined').map((t) => t.nonce)).toContain(pool.nonce + 1);
  });
});
