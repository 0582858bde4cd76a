// A lying node against the reorg door (bb54f4d, 2cc3df6): a record the journal saw mined is set aside when the block it
// was seen in is gone from its height, then judged at finality by the transaction that took its nonce. Both are the
// node's word. This node hides a mined bonus pool (no receipt, no transaction, no log, its bytes "nonce too low"),
// answers the pool's block with another hash, and shows in it a made-up transaction of the wallet at the pool's nonce
// (another input, another hash: a node cannot sign for the wallet). Before the taker's signature was checked, the rerun
// found the pool void and funded a second one: 3 USDC on a 2 USDC file, two pools for one question (exit 0, "funded").
// --atomic: the bonus is one batch (approve + pool), so the void record's calls are both signed again. Ordered, only the
// pool call is, and it fails its estimate on the allowance the first pool used (call_would_revert): no second pool
// there, by the token's luck rather than by loopsign's rule.
import { keccak256, toHex, type Hex } from 'viem';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** The forging node in front of the sandbox's anvil (see the file's head). */
async function forgingNode(hidden: { hash: Hex; raw: Hex }) {
  const log: string[] = [];
  const hash = hidden.hash.toLowerCase();
  const fake = keccak256(toHex(`made up: ${hash}`));
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
    const reply = (doc: object) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...doc }));
    const param = String(call.params?.[0] ?? '').toLowerCase();
    if ((call.method === 'eth_getTransactionReceipt' || call.method === 'eth_getTransactionByHash') && param === hash) {
      log.push(`${call.method} (hidden)`);
      return reply({ result: null });
    }
    if (call.method === 'eth_sendRawTransaction') {
      log.push(param === hidden.raw.toLowerCase() ? 'eth_sendRawTransaction (hidden: nonce too low)' : 'eth_sendRawTransaction');
      if (param === hidden.raw.toLowerCase()) return reply({ error: { code: -32000, message: 'nonce too low' } });
    } else log.push(call.method);
    const result = await anvilRpc(s, call.method, call.params ?? []);
    if (call.method === 'eth_getLogs' && Array.isArray(result))
      return reply({ result: result.filter((l: { transactionHash?: string }) => l.transactionHash?.toLowerCase() !== hash) });
    if ((call.method === 'eth_getBlockByNumber' || call.method === 'eth_getBlockByHash') && result?.transactions) {
      const txs = result.transactions as (string | { hash: string })[];
      if (txs.some((t) => (typeof t === 'string' ? t : t.hash).toLowerCase() === hash)) {
        log.push(`${call.method} (forged block)`);
        return reply({
          result: {
            ...result,
            hash: keccak256(toHex(`forged block: ${result.hash}`)),
            transactions: txs.map((t) =>
              typeof t === 'string'
                ? t.toLowerCase() === hash
                  ? fake
                  : t
                : t.hash.toLowerCase() === hash
                  ? { ...t, hash: fake, input: '0xdead' }
                  : t,
            ),
          },
        });
      }
    }
    reply({ result });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    log,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

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
      question: { title, contextUrl: `https://example.com/forged-block/${id}`, categoryId: '1', tags: ['forged-block'] },
    }),
  );
}

describe('a node that forges a mined bonus pool’s block', () => {
  it('another hash at its height and a made-up taker at its nonce: no second pool (rpc_inconsistent, nothing signed)', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const before = await w.usdcOf();
    const file = askFile(home, `Forged block ${Date.now()}`);
    const ask = (flags: string[] = []) =>
      runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--atomic', ...flags], home, { env: w.env });
    const first = await ask();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const contentId = BigInt(first.json().contentIds[0] as string);
    const pool = recorded(home, first.json().operation)
      .txs.filter((t) => t.stage === 'bonus')
      .at(-1)!;
    expect(pool.status).toBe('mined');
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
    await anvilRpc(s, 'anvil_mine', ['0x3']); // the pool's block below the sandbox's finalized block (head − 2)

    const liar = await forgingNode({ hash: pool.hash, raw: pool.raw });
    let rerun: Awaited<ReturnType<typeof ask>>;
    try {
      rerun = await ask(['--rpc-url', liar.url]);
    } finally {
      await liar.close();
    }
    expect(liar.log, 'the node was asked for the pool’s block').toContain('eth_getBlockByNumber (forged block)');
    expect(await bonusPoolsBy(s, w.address, contentId), rerun.stdout + rerun.stderr).toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(4);
    expect(rerun.json().error.code).toBe('rpc_inconsistent');
    expect(liar.log).not.toContain('eth_sendRawTransaction');
    expect(recorded(home, first.json().operation).txs.find((t) => t.hash === pool.hash)?.status).toBe('mined');
  });
});
