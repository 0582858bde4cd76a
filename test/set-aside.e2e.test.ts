// --set-aside-stale (as an agent that always passes it would) against a node that lied about block 0 and answers "no
// receipt" for the journal's transactions (a backend behind, or a lie): b428ccf keeps a journal whose receipts are
// there, but one "no receipt" was enough to set it aside (helper-37).
// - The node's own nonce count shows the wallet's journaled nonces used: not set aside (journal_not_set_aside, exit
//   4); the ask set aside after its reservation was stuck for good (its fresh reservation reverts), now it resumes.
// - A node that also shows them unused (as a restarted chain would) still gets it set aside: the fresh ask of a
//   completed one proves its submission from the set-aside record's own transaction and, with a service offering the
//   funded bonus plan again, funded a second pool (1 USDC over maxPaymentAmount). Now refused from the journal alone.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { withStore } from './helpers/store.js';
import { openSession, submissionsTitled as titled, tokenBalance, type Session } from './helpers/chain.js';

let s: Session;
beforeAll(async () => {
  s = await openSession({ raters: false });
});
afterAll(async () => {
  await s.sb.stop();
});

/** A proxy listening on 127.0.0.1: its URL, what it logged, and how to close it. */
async function listening(server: Server, log: string[]) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function liar(target: string, nullReceipts: number, o: { lieGenesis?: boolean; unusedCountOnce?: boolean } = {}) {
  let nulled = 0;
  let counted = false;
  const log: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const call = JSON.parse(body) as { id?: unknown; method?: string; params?: unknown[] };
    if (call.method === 'eth_getTransactionReceipt' && nulled < nullReceipts) {
      nulled++;
      log.push('receipt(null)');
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: null }));
    }
    if (o.unusedCountOnce && !counted && call.method === 'eth_getTransactionCount' && call.params?.[1] === 'latest') {
      counted = true;
      log.push('count(0)');
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: '0x0' }));
    }
    log.push(String(call.method));
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    let text = await answer.text();
    if (o.lieGenesis !== false && call.method === 'eth_getBlockByNumber' && String(call.params?.[0]) === '0x0') {
      const doc = JSON.parse(text) as { result?: { hash?: string } };
      if (doc.result?.hash) doc.result.hash = `0x${'6e'.repeat(32)}`;
      text = JSON.stringify(doc);
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  });
  return listening(server, log);
}

async function serviceLiar(target: string, bonus: unknown) {
  const log: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
    let text = await answer.text();
    try {
      const doc = JSON.parse(text) as Record<string, any>;
      if (doc && typeof doc === 'object' && doc.feedbackBonus && !doc.feedbackBonus.transactionPlan) {
        doc.feedbackBonus = bonus;
        text = JSON.stringify(doc);
        log.push(`${req.method} ${req.url} (bonus plan injected)`);
      } else log.push(`${req.method} ${req.url}`);
    } catch {
      log.push(`${req.method} ${req.url} (not json)`);
    }
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
  });
  return listening(server, log);
}

const askFile = (title: string, extra: Record<string, unknown> = {}) =>
  s.home.file(
    `${title.replace(/\W+/g, '-')}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `${title.replace(/\W+/g, '-')}`,
      maxPaymentAmount: '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title, contextUrl: 'https://example.com/set-aside', categoryId: '1', tags: ['set-aside'] },
      ...extra,
    }),
  );
const ask = (file: string, flags: string[] = [], env: Record<string, string> = {}) =>
  runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', ...flags], s.home, { env: { ...s.sb.env(), ...env } });

describe('--set-aside-stale and a node that answers no receipt for what the journal saw mined', () => {
  it('is not set aside while the node shows the journaled nonces used (exit 4, nothing sent); an honest rerun resumes and pays once', async () => {
    const title = `Set aside lagging ${Date.now()}`;
    const file = askFile(title);
    const before = await tokenBalance(s, 'USDC');
    // The node lies about block 0 when the ask first meets it: the lie is recorded; the reservation is mined.
    const lying = await liar(s.sb.info.rpcUrl, 0);
    const first = await ask(file, ['--rpc-url', lying.url], { LOOPSIGN_CRASH_AFTER: 'ask:mined:0' });
    await lying.close();
    expect(first.code, first.stdout + first.stderr).toBe(-1);
    // An honest node whose reading backend is behind: no receipt for the reservation, its nonce used.
    const lagging = await liar(s.sb.info.rpcUrl, 3, { lieGenesis: false });
    try {
      const rerun = await ask(file, ['--set-aside-stale', '--rpc-url', lagging.url]);
      expect(rerun.code, rerun.stdout + rerun.stderr).toBe(4);
      expect(rerun.json().error.code).toBe('journal_not_set_aside');
      expect(rerun.stderr).not.toMatch(/kept as/);
      expect(lagging.log).not.toContain('eth_sendRawTransaction');
    } finally {
      await lagging.close();
    }
    const resumed = await ask(file, ['--set-aside-stale']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.json()).toMatchObject({ status: 'submitted', resumed: true });
    expect(await titled(s, title)).toBe(1);
    expect(before - (await tokenBalance(s, 'USDC'))).toBe(1_500_000n);
  });

  it('never funds the bonus it signed a second time: the fresh ask proves its submission from that record (exit 5, bonus_in_set_aside_record)', async () => {
    const title = `RT37 bonus ${Date.now()}`;
    const file = s.home.file(
      'rt37.json',
      JSON.stringify({
        chainId: 31337,
        clientRequestId: `rt37-${Date.now()}`,
        maxPaymentAmount: '2500000',
        bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: { amount: '1000000', asset: 'USDC' },
        question: { title, contextUrl: 'https://example.com/rt37', categoryId: '1', tags: ['rt37'] },
      }),
    );
    const before = await tokenBalance(s, 'USDC');
    const first = await runCli(['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls'], s.home, { env: s.sb.env() });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const afterFirst = await tokenBalance(s, 'USDC');
    expect(before - afterFirst).toBe(2_500_000n);
    const proxy = await liar(s.sb.info.rpcUrl, 3, { unusedCountOnce: true });
    const op = first.json().operation as string;
    const bonus = withStore(
      s.home,
      (db) => JSON.parse((db.prepare('SELECT data FROM operations WHERE id = ?').get(op) as { data: string }).data).bonusPlan.bonus,
    );
    const svc = await serviceLiar(s.sb.info.baseUrl, bonus);
    try {
      const second = await runCli(
        ['--json', 'ask', '--file', file, '--payment-mode', 'wallet_calls', '--set-aside-stale', '--rpc-url', proxy.url],
        s.home,
        {
          env: { ...s.sb.env(), LOOPSIGN_BASE_URL: svc.url },
        },
      );
      // The attack's preconditions held: the record was set aside, and the service offered the plan again.
      expect(second.stderr).toMatch(/kept as ask-[0-9a-f]{32}~other-chain-/);
      expect(svc.log.some((l) => l.includes('bonus plan injected'))).toBe(true);
      expect(second.code, second.stdout + second.stderr).toBe(5);
      expect(second.json().error.code).toBe('bonus_in_set_aside_record');
      expect(proxy.log).not.toContain('eth_sendRawTransaction');
    } finally {
      await svc.close();
      await proxy.close();
    }
    expect(await tokenBalance(s, 'USDC')).toBe(afterFirst);
    expect(await titled(s, title)).toBe(1);
  });
});
