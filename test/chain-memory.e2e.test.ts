import { copyFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import { bonusPoolsBy, fundedWallet, openSession, type Session } from './helpers/chain.js';
import { startStallProxy } from './helpers/stall-proxy.js';
import { recorded, recordedOfKind, storeFile } from './helpers/store.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

const freshWallet = () => fundedWallet(s.sb, s.pub);

let n = 0;
/** An ask file in `home`: a 1 USDC bounty, with `bonus` a 1 USDC feedback bonus; maxPaymentAmount covers both once. */
function askFile(home: Home, title: string, bonus: boolean): string {
  const id = `${title.replace(/\W+/g, '-')}-${process.pid}-${n++}`;
  return home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: bonus ? '2000000' : '1000000',
      bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
      ...(bonus ? { feedbackBonus: { amount: '1000000', asset: 'USDC' } } : {}),
      question: { title, contextUrl: `https://example.com/chain-memory/${id}`, categoryId: '1', tags: ['chain-memory'] },
    }),
  );
}

async function listen(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * A node that hides `hidden` (mined): no receipt, no transaction, its bytes answered "nonce too low"; and answers the
 * receipt of `stale` (a journaled transaction that was never mined), if any, with the hidden transaction's real receipt.
 */
async function hidingNode(hidden: { hash: Hex; raw: Hex }, stale: Hex | undefined) {
  const log: string[] = [];
  const node = async (body: string) =>
    (await (await fetch(s.sb.info.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as Record<
      string,
      any
    >;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const call = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
    const reply = (doc: object) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...doc }));
    const param = String(call.params?.[0] ?? '').toLowerCase();
    if (
      (call.method === 'eth_getTransactionReceipt' || call.method === 'eth_getTransactionByHash') &&
      param === hidden.hash.toLowerCase()
    ) {
      log.push(`${call.method} (hidden)`);
      return reply({ result: null });
    }
    if (call.method === 'eth_sendRawTransaction' && param === hidden.raw.toLowerCase()) {
      log.push('eth_sendRawTransaction (nonce too low)');
      return reply({ error: { code: -32000, message: 'nonce too low' } });
    }
    if (call.method === 'eth_getTransactionReceipt' && stale && param === stale.toLowerCase()) {
      log.push('eth_getTransactionReceipt (forged)');
      const real = await node(JSON.stringify({ jsonrpc: '2.0', id: call.id, method: 'eth_getTransactionReceipt', params: [hidden.hash] }));
      return reply({ result: { ...real.result, transactionHash: stale } });
    }
    log.push(call.method);
    reply(await node(body));
  });
  return { log, ...(await listen(server)) };
}

const ask = (home: Home, file: string, env: Record<string, string | undefined>, flags: string[] = []) =>
  runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', ...flags], home, { env });

describe('a feedback bonus pool is funded once per question, whatever the node or the journal says', () => {
  it('attack 1: a node that hides the mined bonus transaction and forges a set-aside record’s receipt gets no second pool', async () => {
    const w = await freshWallet();
    const home = makeHome();
    const before = await w.usdcOf();
    // The ask, finished: its bonus is one self-executed batch (approve + pool), the wallet's last transaction.
    const fileA = askFile(home, `Attack one ${Date.now()}`, true);
    const first = await ask(home, fileA, w.env, ['--atomic']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const contentId = first.json().contentIds[0] as string;
    expect(await bonusPoolsBy(s, w.address, contentId)).toBe(1);
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
    const bonusTxs = recorded(home, first.json().operation).txs.filter((t) => t.stage === 'bonus');
    expect(bonusTxs.map((t) => t.status)).toEqual(['mined']);
    const bonusTx = bonusTxs[0]!;

    // Another ask through a node whose pending count lags one behind. Before nonce slots it was signed with the bonus's
    // nonce and set aside (stale_nonce, its record kept at that nonce, never mined); with them its nonce is allocated
    // past every journaled slot and it pays its own bounty once.
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'pending-count-one-behind');
    let lagged: Awaited<ReturnType<typeof ask>>;
    try {
      lagged = await ask(home, askFile(home, `Attack one lagged ${Date.now()}`, false), w.env, ['--rpc-url', proxy.url]);
    } finally {
      await proxy.close();
    }
    expect([0, 4], lagged.stdout + lagged.stderr).toContain(lagged.code);
    if (lagged.code === 4) expect(lagged.json().error.code).toBe('stale_nonce');
    const paidBefore = 2_000_000n + (lagged.code === 0 ? 1_000_000n : 0n);
    const stale = recordedOfKind(home, 'ask')
      .flatMap((o) => o.txs)
      .find((t) => t.nonce === bonusTx.nonce && t.hash !== bonusTx.hash);
    if (lagged.code === 4) expect(stale, 'a journaled record with the bonus transaction’s nonce, never mined').toBeDefined();
    expect(before - (await w.usdcOf()), 'the lagged ask paid its bounty at most').toBe(paidBefore);

    // The finished ask again, "as the docs say is safe", through the node that hides its bonus.
    const liar = await hidingNode({ hash: bonusTx.hash, raw: bonusTx.raw }, stale?.hash);
    let rerun: Awaited<ReturnType<typeof ask>>;
    try {
      rerun = await ask(home, fileA, w.env, ['--atomic', '--rpc-url', liar.url]);
    } finally {
      await liar.close();
    }
    // Before: the rerun marked the mined bonus dropped and signed it again at a new nonce (exit 0, two pools).
    const pools = await bonusPoolsBy(s, w.address, contentId);
    expect(pools, rerun.stdout + rerun.stderr).toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(paidBefore);
    expect(liar.log, 'no new bytes were sent for the bonus').not.toContain('eth_sendRawTransaction');
    expect(rerun.stderr).toMatch(/"event":"bonus\.on_chain"/);
    // The pool found on chain: reported funded; or the node's lie about the journal's mined record named (exit 4),
    // once the executor never drops a mined record on a node's word.
    expect([0, 4], rerun.stdout + rerun.stderr).toContain(rerun.code);
    if (rerun.code === 0) expect(rerun.json().feedbackBonus).toMatchObject({ status: 'funded', contentId });
  });

  it('attack 2: an ask killed right after its bonus pool is mined, its -wal and -shm lost, funds no second pool on the rerun', async () => {
    const w = await freshWallet();
    const home = makeHome();
    const before = await w.usdcOf();
    const file = askFile(home, `Attack two ${Date.now()}`, true);
    // The bounty paid and the bonus planned; another loopsign command then closes the database cleanly (so what the
    // ask did so far is in loopsign.db itself, as after any normal use).
    expect((await ask(home, file, { ...w.env, LOOPSIGN_CRASH_AFTER: 'bonus:planned' })).code).toBe(-1);
    expect((await runCli(['--json', 'history'], home, { env: w.env })).code).toBe(0);
    // Killed right after the pool call is mined (ordered: the approval, then the pool).
    const killed = await ask(home, file, { ...w.env, LOOPSIGN_CRASH_AFTER: 'bonus:mined:1' });
    expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
    // A backup or sync tool copies loopsign.db alone.
    for (const side of ['-wal', '-shm']) rmSync(`${storeFile(home)}${side}`, { force: true });
    const rerun = await ask(home, file, w.env);
    const [op] = recordedOfKind(home, 'ask');
    const contentId = String(op?.data.bonusPlan?.target?.contentId ?? rerun.json().contentIds?.[0]);
    expect(await bonusPoolsBy(s, w.address, contentId), rerun.stdout + rerun.stderr).toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().feedbackBonus).toMatchObject({ status: 'funded', contentId });
  });

  it('a database restored from before the bonus: the rerun finds the pool on chain and signs nothing; the next payment warns once of the nonces the store cannot explain', async () => {
    const w = await freshWallet();
    const home = makeHome();
    const before = await w.usdcOf();
    const file = askFile(home, `Restored ${Date.now()}`, true);
    expect((await ask(home, file, { ...w.env, LOOPSIGN_CRASH_AFTER: 'bonus:planned' })).code).toBe(-1);
    expect((await runCli(['--json', 'history'], home, { env: w.env })).code).toBe(0);
    const db = storeFile(home);
    const backup = `${db}.backup`;
    // A backup of loopsign.db alone (every commit is checkpointed into it: docs/store.md).
    copyFileSync(db, backup);
    const done = await ask(home, file, w.env);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const contentId = done.json().contentIds[0] as string;
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
    // The backup comes back: the journal no longer knows the bonus transactions.
    copyFileSync(backup, db);
    for (const side of ['-wal', '-shm', '-journal']) rmSync(`${db}${side}`, { force: true });
    const rerun = await ask(home, file, w.env);
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(0);
    expect(rerun.json().feedbackBonus).toMatchObject({ status: 'funded', contentId });
    expect(rerun.stderr).toMatch(/"event":"bonus\.on_chain"/);
    expect(await bonusPoolsBy(s, w.address, contentId)).toBe(1);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
    // The next ask signs: the wallet's count on chain is past what the restored database knows, which it says once.
    const next = askFile(home, `Restored next ${Date.now()}`, false);
    const warned = await ask(home, next, w.env);
    expect(warned.code, warned.stdout + warned.stderr).toBe(0);
    expect(warned.stderr).toMatch(/loopsign's database explains only \d+: it lost records/);
    expect(before - (await w.usdcOf())).toBe(3_000_000n);
    // Said once: the next payment has no warning.
    const again = await ask(home, askFile(home, `Restored again ${Date.now()}`, false), w.env);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/database explains only/);
    expect(before - (await w.usdcOf())).toBe(4_000_000n);
  });

  // Red team (h6). The restored database above, rerun through a node whose eth_getLogs answers nothing (a provider whose
  // log index lags its head, as several do for recent blocks, or a node that hides events). The journal restored from
  // before the bonus holds no bonus transaction, so the chain check was the bonus's only memory, and one node's empty
  // answer defeated it: the rerun funded a second pool (3 USDC left the wallet on a 2 USDC file), with only the mark's
  // warning. Now a bonus is signed only when the wallet's count on chain is what the database recorded or a person
  // confirmed (wallet_nonces_unexplained, exit 5, until --accept-foreign-nonces).
  it('a database restored from before the bonus, rerun through a node whose logs lag: no second pool', async () => {
    const w = await freshWallet();
    const home = makeHome();
    const before = await w.usdcOf();
    const file = askFile(home, `Restored lagging logs ${Date.now()}`, true);
    expect((await ask(home, file, { ...w.env, LOOPSIGN_CRASH_AFTER: 'bonus:planned' })).code).toBe(-1);
    expect((await runCli(['--json', 'history'], home, { env: w.env })).code).toBe(0);
    const db = storeFile(home);
    const backup = `${db}.backup`;
    copyFileSync(db, backup);
    const done = await ask(home, file, w.env);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const contentId = done.json().contentIds[0] as string;
    expect(before - (await w.usdcOf())).toBe(2_000_000n);
    copyFileSync(backup, db);
    for (const side of ['-wal', '-shm', '-journal']) rmSync(`${db}${side}`, { force: true });
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'logs-empty');
    let rerun: Awaited<ReturnType<typeof ask>>;
    try {
      rerun = await ask(home, file, w.env, ['--rpc-url', proxy.url]);
    } finally {
      await proxy.close();
    }
    expect(proxy.forwarded, 'the chain check asked this node').toContain('eth_getLogs (empty)');
    expect(await bonusPoolsBy(s, w.address, contentId), rerun.stdout + rerun.stderr).toBe(1);
    expect(rerun.code, rerun.stdout + rerun.stderr).toBe(5);
    expect(rerun.json().error.code).toBe('wallet_nonces_unexplained');
    expect(rerun.json().error.hint).toMatch(/--accept-foreign-nonces/);
    expect(before - (await w.usdcOf()), 'the bounty and the bonus, each once').toBe(2_000_000n);
  });

  it('another program that used the wallet: confirmed with the flag, else said in a warning; asks go on', async () => {
    const w = await freshWallet();
    const home = makeHome();
    const first = await ask(home, askFile(home, `Foreign first ${Date.now()}`, false), w.env);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const other = createWalletClient({ account: privateKeyToAccount(w.key), transport: http(s.sb.info.rpcUrl) });
    for (let i = 0; i < 2; i++)
      await s.pub.waitForTransactionReceipt({ hash: await other.sendTransaction({ chain: null, to: w.address, value: 0n }) });
    const file = askFile(home, `Foreign second ${Date.now()}`, false);
    const before = await w.usdcOf();
    const confirmed = await ask(home, file, w.env, ['--accept-foreign-nonces']);
    expect(confirmed.code, confirmed.stdout + confirmed.stderr).toBe(0);
    expect(confirmed.stderr).toMatch(/confirmed as yours \(--accept-foreign-nonces\)/);
    expect(before - (await w.usdcOf())).toBe(1_000_000n);
    // Two more outside, and no flag: the ask goes on, saying so.
    for (let i = 0; i < 2; i++)
      await s.pub.waitForTransactionReceipt({ hash: await other.sendTransaction({ chain: null, to: w.address, value: 0n }) });
    const next = await ask(home, askFile(home, `Foreign third ${Date.now()}`, false), w.env);
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(next.stderr).toMatch(/has sent \d+ transactions on chain 31337, but loopsign's database explains only/);
  });
});
