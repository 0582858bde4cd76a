// `status` and `history` say per transaction whether it is included or final (issue 35), against the sandbox: its
// anvil runs one slot an epoch, so its finalized block is two behind the head, and two blocks mined make an ask's last
// transaction final. A node that cannot answer the finalized block gives "unknown" with why, never "final". And a
// vote (`rate`) checks the database's memory of the wallet before its first signature as an ask does: an unexplained
// transaction count on chain is said once per new count, and --accept-foreign-nonces confirms it.
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, runCli, type Home } from './helpers/cli.js';
import { fundedWallet, openSession, type Session } from './helpers/chain.js';
import { startStallProxy } from './helpers/stall-proxy.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

let n = 0;
function askFile(home: Home, title: string): string {
  const id = `${title.replace(/\W+/g, '-')}-${process.pid}-${n++}`;
  return home.file(
    `${id}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: id,
      maxPaymentAmount: '1000000',
      bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
      question: { title, contextUrl: 'https://example.com/tx-states', categoryId: '1', tags: ['tx-states'] },
    }),
  );
}

const mine = async (blocks: number) => {
  for (let i = 0; i < blocks; i++)
    await fetch(s.sb.info.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
    });
};

interface TxView {
  stage: string;
  hash: string;
  nonce: number;
  state: string;
  blockNumber: string | null;
  confirmations: number | null;
  finalAtBlock: string | null;
  reason?: string;
}

describe('status and history: each transaction included, then final', () => {
  it("an ask's transactions: included at first, final once the finalized block passes them (text and JSON)", async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const asked = await runCli(['--json', 'ask', '--file', askFile(home, `States ${Date.now()}`), '--payment-mode', 'wallet_calls'], home, {
      env: w.env,
    });
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const key = asked.json().operationKey as string;
    const operation = asked.json().operation as string;
    const hashes = asked.json().transactionHashes as string[];
    expect(hashes.length).toBeGreaterThan(0);

    // Right after the ask its last transaction is at the head: above the finalized block (head − 2).
    const status = await runCli(['--json', 'status', '--operation-key', key], home, { env: w.env });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const doc = status.json();
    expect(doc.finality).toMatchObject({ tag: 'finalized', finalizedBlock: expect.any(String), headBlock: expect.any(String) });
    const txs = doc.transactions as TxView[];
    expect(txs.map((t) => t.hash.toLowerCase())).toEqual(expect.arrayContaining(hashes.map((h) => h.toLowerCase())));
    const last = txs[txs.length - 1]!;
    expect(last).toMatchObject({ stage: 'ask', state: 'included', finalAtBlock: last.blockNumber, confirmations: 1 });
    expect(BigInt(doc.finality.finalizedBlock)).toBeLessThan(BigInt(last.blockNumber!));
    for (const t of txs)
      expect(t.state, JSON.stringify(t)).toBe(BigInt(t.blockNumber!) <= BigInt(doc.finality.finalizedBlock) ? 'final' : 'included');
    const text = await runCli(['status', '--operation-key', key], home, { env: w.env });
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `${last.hash} +included \\(block ${last.blockNumber}, 1 confirmation\\), final when the finalized block reaches ${last.blockNumber} \\(now \\d+\\)`,
      ),
    );

    const history = await runCli(['--json', 'history'], home, { env: w.env });
    expect(history.code, history.stdout + history.stderr).toBe(0);
    const listed = (history.json().transactions as (TxView & { operation: string })[]).filter((t) => t.operation === operation);
    expect(listed.map((t) => [t.hash, t.state])).toEqual(txs.map((t) => [t.hash, t.state]));

    // Two blocks later the finalized block is the ask's last: every transaction is final.
    await mine(2);
    const after = await runCli(['--json', 'status', '--client-request-id', asked.json().clientRequestId], home, { env: w.env });
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect((after.json().transactions as TxView[]).map((t) => t.state)).toEqual(txs.map(() => 'final'));
    expect((after.json().transactions as TxView[])[txs.length - 1]).toMatchObject({
      blockNumber: last.blockNumber,
      confirmations: null,
      finalAtBlock: null,
    });
    const afterText = await runCli(['status', '--operation-key', key], home, { env: w.env });
    expect(afterText.stdout).toMatch(new RegExp(`${last.hash} +final \\(block ${last.blockNumber}\\)`));

    const h2 = await runCli(['--json', 'history'], home, { env: w.env });
    expect(
      (h2.json().transactions as (TxView & { operation: string })[]).filter((t) => t.operation === operation).map((t) => t.state),
    ).toEqual(txs.map(() => 'final'));
    const h2Text = await runCli(['history'], home, { env: w.env });
    expect(h2Text.code, h2Text.stdout + h2Text.stderr).toBe(0);
    expect(h2Text.stdout).toMatch(new RegExp(`transactions\\n  ${operation}\\n    ask +nonce \\d+ +0x[0-9a-f]{64}  final \\(block`));
    const one = await runCli(['--json', 'history', '--operation', operation], home, { env: w.env });
    expect(one.code, one.stdout + one.stderr).toBe(0);
    expect((one.json().transactions as TxView[]).map((t) => [t.hash, t.state])).toEqual(txs.map((t) => [t.hash, 'final']));
    // CSV is the spend rows alone.
    const csv = await runCli(['history', '--csv'], home, { env: w.env });
    expect(csv.stdout.split('\n')[0]).toBe('day,chain_id,asset,amount,display,operation,kind,wallet');
  });

  it('a node that cannot answer the finalized block: unknown with why, never final', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const asked = await runCli(
      ['--json', 'ask', '--file', askFile(home, `Unknown ${Date.now()}`), '--payment-mode', 'wallet_calls'],
      home,
      {
        env: w.env,
      },
    );
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const key = asked.json().operationKey as string;
    await mine(3); // final on an honest node
    const proxy = await startStallProxy(s.sb.info.rpcUrl, 'finalized-fails');
    try {
      const status = await runCli(['--json', 'status', '--operation-key', key, '--rpc-url', proxy.url], home, { env: w.env });
      expect(status.code, status.stdout + status.stderr).toBe(0);
      const txs = status.json().transactions as TxView[];
      expect(txs.length).toBeGreaterThan(0);
      for (const t of txs) {
        expect(t.state).toBe('unknown');
        expect(t.reason).toMatch(/could not read the chain's finalized block \(.*finalized block not available/);
      }
      expect(status.json().finality).toMatchObject({ tag: 'finalized', unknown: expect.stringMatching(/finalized block not available/) });
      expect(proxy.forwarded).toContain('eth_getBlockByNumber finalized (failed)');
      const text = await runCli(['status', '--operation-key', key, '--rpc-url', proxy.url], home, { env: w.env });
      expect(text.stdout).toMatch(/unknown: could not read the chain's finalized block/);
      expect(text.stdout).not.toMatch(/ final /);
      const history = await runCli(['--json', 'history', '--rpc-url', proxy.url], home, { env: w.env });
      expect(history.code, history.stdout + history.stderr).toBe(0);
      expect((history.json().transactions as TxView[]).map((t) => t.state)).toEqual(txs.map(() => 'unknown'));
    } finally {
      await proxy.close();
    }
    // The same node answering again: final.
    const honest = await runCli(['--json', 'status', '--operation-key', key], home, { env: w.env });
    expect((honest.json().transactions as TxView[]).map((t) => t.state)).toEqual(
      (honest.json().transactions as TxView[]).map(() => 'final'),
    );
  });
});

describe("rate checks the database's memory of the wallet before its first signature, as ask does", () => {
  it('a count on chain the database does not explain: warned once per new count; --accept-foreign-nonces confirms it', async () => {
    const w = await fundedWallet(s.sb, s.pub);
    const home = makeHome();
    const vote = async (flags: string[] = []) => {
      const contentId = String((await s.sb.control('/__sandbox/content', {})).contentId);
      const r = await runCli(['--json', 'rate', '--content-id', contentId, '--up', '--prediction', '60', '--stake', '1', ...flags], home, {
        env: w.env,
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return r;
    };
    const first = await vote();
    expect(first.stderr).not.toMatch(/database explains only/);
    // Another program sends from the wallet: the next vote says so, once.
    const other = createWalletClient({ account: privateKeyToAccount(w.key), transport: http(s.sb.info.rpcUrl) });
    const outside = async () => {
      for (let i = 0; i < 2; i++)
        await s.pub.waitForTransactionReceipt({ hash: await other.sendTransaction({ chain: null, to: w.address, value: 0n }) });
    };
    await outside();
    const warned = await vote();
    expect(warned.stderr).toMatch(/has sent \d+ transactions on chain 31337, but loopsign's database explains only \d+/);
    expect(warned.stderr).toMatch(/--accept-foreign-nonces confirms them/);
    const quiet = await vote();
    expect(quiet.stderr).not.toMatch(/database explains only/);
    await outside();
    const confirmed = await vote(['--accept-foreign-nonces']);
    expect(confirmed.stderr).toMatch(/confirmed as yours \(--accept-foreign-nonces\)/);
    expect(confirmed.stderr).not.toMatch(/database explains only/);
  });
});
