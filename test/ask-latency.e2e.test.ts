// Speed where users wait (issue 15 §1), and the rules it keeps. `sandbox --block-time` mines at intervals once set
// up; LOOPSIGN_TIMINGS reports phases on stderr only; the reservation's minimum age is judged by the chain's clock
// (every submit lands in a block stamped at least 1 s after its reservation's, ordered or --atomic, instant or
// 2-second blocks); and the keystore, unlocked while the service is asked, signs nothing unless it unlocks to the
// very address the ask went out with. Timings themselves are printed by bench/ask.mjs, never asserted here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createPublicClient, http, type Hex } from 'viem';
import { makeHome, registerSecret, runCli, TEST_ADDRESS, type Home } from './helpers/cli.js';
import { startSandbox, type SandboxHandle } from './helpers/sandbox.js';
import { recorded } from './helpers/store.js';
import { openSession } from './helpers/chain.js';
import { startStallProxy } from './helpers/stall-proxy.js';

let n = 0;
const PHASES = ['unlock', 'service', 'signing', 'blocks', 'reservation age', 'confirmation', 'checkpoint'];

function askFile(home: Home, tag: string): string {
  const body = {
    chainId: 31337,
    clientRequestId: `latency-${process.pid}-${Date.now()}-${n++}`,
    maxPaymentAmount: '2500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    feedbackBonus: { amount: '1000000', asset: 'USDC' },
    question: { title: `Latency ${tag} (${n})`, contextUrl: 'https://example.com/latency', categoryId: '1', tags: ['latency'] },
  };
  return home.file(`${body.clientRequestId}.json`, JSON.stringify(body));
}

interface Chain {
  sb: SandboxHandle;
  home: Home;
  pub: ReturnType<typeof createPublicClient>;
}

async function chain(args: string[]): Promise<Chain> {
  const settings = { raters: false, rateLimits: { write: 10_000, read: 10_000 } };
  // Instant blocks are how every sandbox starts: the worker's shared one. --block-time is a start flag (it changes how
  // anvil mines), so that chain must be this file's own.
  if (args.length === 0) return openSession(settings);
  const sb = await startSandbox(args);
  await sb.control('/__sandbox/settings', settings);
  registerSecret(readFileSync(sb.info.devWallet.passwordFile, 'utf8').trim());
  return { sb, home: makeHome(), pub: createPublicClient({ transport: http(sb.info.rpcUrl), pollingInterval: 50 }) };
}

/** The timestamp of the block a journaled transaction was mined in. */
const stamp = async (c: Chain, t: any) => (await c.pub.getBlock({ blockNumber: BigInt(t.blockNumber) })).timestamp;

/** An ask + USDC bonus through the built binary; the block timestamps of its reservation and of its submit. */
async function ask(c: Chain, atomic: boolean, env: Record<string, string> = {}) {
  const r = await runCli(
    [
      '--json',
      'ask',
      '--file',
      askFile(c.home, atomic ? 'atomic' : 'ordered'),
      '--payment-mode',
      'wallet_calls',
      ...(atomic ? ['--atomic'] : []),
    ],
    c.home,
    { env: { ...c.sb.env(), ...env } },
  );
  expect(r.code, r.stderr).toBe(0);
  const journal = recorded(c.home, r.json().operation);
  const asked = journal.txs.filter((t: any) => t.stage === 'ask' && t.status === 'mined');
  const last = Math.max(...asked.flatMap((t: any) => t.calls));
  const reserve = asked.find((t: any) => t.calls.includes(0));
  const submit = asked.find((t: any) => t.calls.includes(last));
  return {
    r,
    transactions: journal.txs.filter((t: any) => t.status === 'mined').length,
    reserveTs: await stamp(c, reserve),
    submitTs: await stamp(c, submit),
    reserve,
    submit,
  };
}

describe('instant blocks', () => {
  let c: Chain;
  beforeAll(async () => {
    c = await chain([]);
  });
  afterAll(async () => {
    await c.sb.stop();
  });

  it("every submit lands in a block stamped at least 1 s after its reservation's, ordered and --atomic", async () => {
    for (const atomic of [false, true, false, true]) {
      const a = await ask(c, atomic);
      expect(a.submit.hash).not.toBe(a.reserve.hash);
      expect(a.submitTs).toBeGreaterThanOrEqual(a.reserveTs + 1n);
    }
  });

  it('LOOPSIGN_TIMINGS=1 reports every phase on stderr, once, and leaves stdout one JSON document; off by default', async () => {
    const on = await ask(c, true, { LOOPSIGN_TIMINGS: '1' });
    const lines = on.r.stderr.split('\n').filter((l) => l.includes('"event":"timings"'));
    expect(lines).toHaveLength(1);
    const t = JSON.parse(lines[0]!);
    expect(t.totalMs).toBeGreaterThan(0);
    expect(Object.keys(t.phases).sort()).toEqual([...PHASES].sort());
    expect(t.phases.signing.count).toBe(on.transactions);
    expect(on.r.json()).toMatchObject({ ok: true, status: 'submitted' });
    const off = await ask(c, true);
    expect(off.r.stderr).not.toContain('"timings"');
  });

  it('a keystore that does not unlock, or unlocks to another address than its file names, signs nothing (exit 6)', async () => {
    const dev = c.sb.info.devWallet.address as Hex;
    const nonce = () => c.pub.getTransactionCount({ address: dev });
    const before = await nonce();
    const wrongPassword = c.home.file('wrong-password.txt', 'definitely not it\n');
    const bad = await runCli(['--json', 'ask', '--file', askFile(c.home, 'wrong'), '--payment-mode', 'wallet_calls', '--atomic'], c.home, {
      env: { ...c.sb.env(), LOOPSIGN_PASSWORD_FILE: wrongPassword },
    });
    expect(bad.code, bad.stderr).toBe(6);
    expect(bad.json().error.code).toBe('wrong_password');
    // The file names another wallet: the ask goes out for that address while the key is derived, and the key
    // that comes out is refused before anything is signed.
    const renamed = path.join(c.home.dir, 'renamed-keystore.json');
    copyFileSync(c.sb.info.devWallet.keystore, renamed);
    const ks = JSON.parse(readFileSync(renamed, 'utf8'));
    expect(ks.address).toBeDefined();
    ks.address = TEST_ADDRESS.slice(2).toLowerCase();
    writeFileSync(renamed, JSON.stringify(ks));
    // Funded, so that every check that needs only the address passes and the unlock is what decides.
    await c.sb.control('/__sandbox/fund', { address: TEST_ADDRESS, usdc: '10000000', eth: '10' });
    const other = await runCli(
      ['--json', 'ask', '--file', askFile(c.home, 'renamed'), '--payment-mode', 'wallet_calls', '--atomic'],
      c.home,
      { env: { ...c.sb.env(), LOOPSIGN_KEYSTORE: renamed } },
    );
    expect(other.code, other.stderr).toBe(6);
    expect(other.json().error.code).toBe('keystore_address_mismatch');
    expect(await nonce()).toBe(before);
  });

  // On the same chain as the tests above: the red team's reruns go through a proxy in front of its node.
  describe('red team: a run that stopped between the approval and the submit', () => {
    /**
     * Reruns the ask at once through an honest node: it resumes and submits, the node is asked for its pending block
     * before `firstSent` (the first estimate or broadcast), and the submit lands at least 1 s after the reservation.
     */
    async function resumeHonestly(file: string, firstSent: 'eth_estimateGas' | 'eth_sendRawTransaction') {
      const honest = await nodeProxy(c.sb.info.rpcUrl);
      const again = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--rpc-url', honest.url], c.home, {
        env: c.sb.env(),
      });
      await honest.close();
      expect(again.code, again.stdout).toBe(0);
      expect(again.json()).toMatchObject({ status: 'submitted', resumed: true });
      const first = honest.methods.indexOf(firstSent);
      expect(first).toBeGreaterThan(0);
      expect(honest.methods.slice(0, first)).toContain('eth_getBlockByNumber:pending');
      const journal = recorded(c.home, again.json().operation);
      const asked = journal.txs.filter((t: any) => t.stage === 'ask');
      expect(asked.map((t: any) => [t.calls, t.status])).toEqual([
        [[0], 'mined'],
        [[1], 'mined'],
        [[2], 'mined'],
      ]);
      expect(await stamp(c, asked[2])).toBeGreaterThanOrEqual((await stamp(c, asked[0])) + 1n);
    }

    it("resumes by waiting for the reservation's age before the submit, even when the first run's wait was cut short by a lying node", async () => {
      const file = askFile(c.home, 'resumed');
      // The first run's node shows the pending block 1000 s ahead (so the approval goes out at once after the
      // reservation) and answers no estimate after the approval: the run stops before the submit.
      const liar = await nodeProxy(c.sb.info.rpcUrl, { sends: 2 });
      const first = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--rpc-url', liar.url], c.home, {
        env: c.sb.env(),
      });
      await liar.close();
      expect(first.code, first.stdout).toBe(4);
      // The node's error names no revert: its failure, not "would revert" (src/errors.ts nodeErrorNotRevert).
      expect(first.json().error.code).toBe('rpc_failed');
      // Resumed at once through an honest node: the submit is sent only after the chain's clock passed the reservation's.
      await resumeHonestly(file, 'eth_estimateGas');
    });

    it("a submit signed and journaled but never broadcast (killed) is broadcast again only after the reservation's age", async () => {
      const file = askFile(c.home, 'rebroadcast');
      // The first run's node shows the pending block 1000 s ahead and vouches for the submit's gas at once, so the
      // submit is signed right after the approval; the process is killed once it is journaled, before its broadcast.
      const liar = await nodeProxy(c.sb.info.rpcUrl, { sends: 2, gas: '0x4c4b40' });
      const first = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--rpc-url', liar.url], c.home, {
        env: { ...c.sb.env(), LOOPSIGN_CRASH_AFTER: 'ask:signed:2' },
      });
      await liar.close();
      expect(first.code, first.stderr).toBe(-1);
      // Resumed at once through an honest node: the journaled bytes go out again only after the chain's clock passed
      // the reservation's (the pending block is looked at before the broadcast).
      await resumeHonestly(file, 'eth_sendRawTransaction');
    });
  });

  describe("red team: a node that fails or stalls its block reads during the reservation's wait", () => {
    /** The ask through `node`; it must pay once, its submit at least 1 s after its reservation on the chain's clock. */
    async function askThrough(node: { url: string }, env: Record<string, string> = {}) {
      const r = await runCli(
        ['--json', 'ask', '--file', askFile(c.home, 'wait'), '--payment-mode', 'wallet_calls', '--rpc-url', node.url],
        c.home,
        {
          env: { ...c.sb.env(), ...env },
        },
      );
      return r;
    }

    it('one failed read of the latest block does not end the ask as an internal error after the reservation was mined', async () => {
      const node = await startStallProxy(c.sb.info.rpcUrl, 'latest-fails-once-after-send');
      const r = await askThrough(node);
      await node.close();
      expect(node.failed).toBe(1);
      expect(r.code, r.stdout).toBe(0);
      expect(r.json()).toMatchObject({ status: 'submitted' });
      const asked = recorded(c.home, r.json().operation).txs.filter((t: any) => t.stage === 'ask');
      expect(asked.map((t: any) => t.status)).toEqual(['mined', 'mined', 'mined']);
      expect(await stamp(c, asked[2])).toBeGreaterThanOrEqual((await stamp(c, asked[0])) + 1n);
    });

    it('a pending block that never comes holds neither the submit nor the process until the RPC timeout gives up on it', async () => {
      const node = await startStallProxy(c.sb.info.rpcUrl, 'pending-hangs-after-send');
      // An RPC timeout of ten minutes: the read the wait stopped waiting for stays open on a node that never answers.
      // The process used to stay with it after printing its answer, for the timeout and its retries (91 s at 30 s),
      // until runCli killed it (code -1).
      const r = await askThrough(node, { LOOPSIGN_RPC_TIMEOUT_MS: '600000' });
      await node.close();
      expect(r.code, r.stdout).toBe(0);
      expect(r.json()).toMatchObject({ status: 'submitted' });
      // The transaction after the reservation went out while a read of the pending block was still unanswered (and
      // not yet given up on): the wait ended on its own clock, not on the node's silence.
      expect(node.openPendingAtSends.length).toBeGreaterThanOrEqual(2);
      expect(node.openPendingAtSends[1]).toBeGreaterThan(0);
      const asked = recorded(c.home, r.json().operation).txs.filter((t: any) => t.stage === 'ask');
      expect(await stamp(c, asked[2])).toBeGreaterThanOrEqual((await stamp(c, asked[0])) + 1n);
    });
  });
});

/**
 * A JSON-RPC proxy in front of the sandbox's node that records every method (with the block asked for) and, when
 * told to, lies: the block being built (pending) stamped 1000 s ahead, and every gas estimate refused once
 * `sends` transactions went through it.
 */
async function nodeProxy(target: string, lie?: { sends: number; gas?: string }) {
  const methods: string[] = [];
  let sent = 0;
  const answer = async (m: { id: unknown; method: string; params?: unknown[] }) => {
    methods.push(m.method === 'eth_getBlockByNumber' ? `${m.method}:${String(m.params?.[0])}` : m.method);
    if (lie && m.method === 'eth_estimateGas' && sent >= lie.sends) {
      return lie.gas
        ? { jsonrpc: '2.0', id: m.id, result: lie.gas }
        : { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'the node is not answering estimates' } };
    }
    const a = (await (
      await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) })
    ).json()) as { result?: { timestamp?: string } };
    if (m.method === 'eth_sendRawTransaction') sent++;
    if (lie && m.method === 'eth_getBlockByNumber' && m.params?.[0] === 'pending' && a.result?.timestamp)
      a.result.timestamp = `0x${(BigInt(a.result.timestamp) + 1000n).toString(16)}`;
    return a;
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('2-second blocks (sandbox --block-time 2)', () => {
  let c: Chain;
  beforeAll(async () => {
    c = await chain(['--block-time', '2']);
  });
  afterAll(async () => {
    await c.sb.stop();
  });

  it('blocks come every 2 s with no transaction, and not one per transaction', async () => {
    expect(await c.pub.request({ method: 'anvil_getAutomine' as never })).toBe(false);
    const a = await c.pub.getBlock({ blockTag: 'latest' });
    await new Promise((r) => setTimeout(r, 4_500));
    const b = await c.pub.getBlock({ blockTag: 'latest' });
    expect(b.number - a.number).toBeGreaterThanOrEqual(2n);
    expect(b.timestamp).toBeGreaterThan(a.timestamp);
  });

  it('an --atomic ask with a USDC bonus: three transactions, the submit at least 1 s after its reservation', async () => {
    const a = await ask(c, true);
    expect(a.transactions).toBe(3);
    expect(a.submitTs).toBeGreaterThanOrEqual(a.reserveTs + 1n);
  });

  it('--block-time must be a whole number of seconds from 1 to 3600', async () => {
    const home = makeHome();
    for (const v of ['0', '1.5', 'abc', '3601']) {
      const r = await runCli(['--json', 'sandbox', '--block-time', v], home);
      expect(r.code, v).toBe(2);
      expect(r.json().error.code).toBe('invalid_block_time');
    }
  });
});
