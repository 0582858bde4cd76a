// `loopsign mcp` (issue 14 §2) as an agent host runs it: the official SDK's client spawns the built binary over
// stdio against a real sandbox. Quote → ask (wait, with progress) → result; a vote; the spending policy per ask
// and per day across two server processes; a human's approval through elicitation, and a refusal without it; a
// cancelled wait resumed without paying twice; a hostile plan refused exactly as through the CLI; every other tool
// returning the document its command prints with --json. Each session's stdout must hold only JSON-RPC, and no
// secret may appear in anything the server printed or wrote.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { capture } from './helpers/capture.js';
import path from 'node:path';
import { filesUnder, findSecret, makeHome, readVector, ROOT, runCli, VECTORS, type Home } from './helpers/cli.js';
import type { SandboxHandle } from './helpers/sandbox.js';
import { nonProtocolLines, startMcp, type McpOptions, type McpSession } from './helpers/mcp.js';
import { openSession, tokenBalance, tokenSentAfter, type Session } from './helpers/chain.js';
import sharp from 'sharp';

let sb: SandboxHandle;
let s: Session;
const sessions: McpSession[] = [];
const homes: Home[] = [];
let n = 0;

beforeAll(async () => {
  s = await openSession({ autoAdvance: true, pollAfterMs: 200, rateLimits: { write: 10_000, read: 10_000 } });
  sb = s.sb;
});
afterAll(async () => {
  for (const m of sessions) if (m.child.exitCode === null) await m.stop().catch(() => undefined);
  await sb?.stop();
});

const balance = (asset: 'USDC' | 'LREP' = 'USDC') => tokenBalance(s, asset);
const nonce = () => s.pub.getTransactionCount({ address: sb.info.devWallet.address });
const cli = (home: Home, args: string[]) => runCli(args, home, { env: sb.env() });

/** A fresh home, with this policy in its config folder when given. */
function home(policy?: unknown): Home {
  const h = makeHome();
  homes.push(h);
  if (policy !== undefined) writePolicy(h, policy);
  return h;
}

function writePolicy(h: Home, policy: unknown): void {
  mkdirSync(path.join(h.env.XDG_CONFIG_HOME, 'loopsign'), { recursive: true });
  writeFileSync(path.join(h.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json'), JSON.stringify(policy));
}

function askFile(h: Home, extra: Record<string, unknown> = {}): string {
  n++;
  return h.file(
    `mcp-ask-${n}.json`,
    JSON.stringify({
      chainId: 31337,
      clientRequestId: `mcp-${process.pid}-${n}-${Date.now()}`,
      maxPaymentAmount: '1500000',
      bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
      question: { title: `MCP question ${n}`, contextUrl: 'https://example.com/mcp', categoryId: '1', tags: ['mcp'] },
      ...extra,
    }),
  );
}

/** Runs `body` with the sandbox's clock jumps off (a round then stays open until this returns). */
async function withoutClockJumps(body: () => Promise<void>): Promise<void> {
  await sb.control('/__sandbox/settings', { autoAdvance: false });
  try {
    await body();
  } finally {
    await sb.control('/__sandbox/settings', { autoAdvance: true });
  }
}

async function serve(h: Home, options: McpOptions = {}): Promise<McpSession> {
  const m = await startMcp(h, { ...options, env: { ...sb.env(), ...options.env } });
  sessions.push(m);
  return m;
}

describe('the server', () => {
  it('lists every tool with an input schema, an output schema and a one-line description', async () => {
    const m = await serve(home());
    const { tools } = await m.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'ask',
        'budget',
        'check_plan',
        'confirm',
        'policy',
        'quote',
        'rate',
        'rate_commit',
        'result',
        'status',
        'templates',
        'upload_image',
        'verify_evidence',
        'wallet_address',
        'wallet_balance',
      ]
        .map((x) => `loopsign_${x}`)
        .sort(),
    );
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.outputSchema?.properties, t.name).toHaveProperty('ok');
      expect(t.description, t.name).toMatch(/^[A-Z][^\n]{20,240}$/);
    }
    // The policy is read-only: no tool takes a policy, a limit or an approval.
    for (const t of tools)
      expect(
        Object.keys(t.inputSchema.properties ?? {}).filter((k) => /polic|limit|approv|threshold/i.test(k)),
        t.name,
      ).toEqual([]);
    expect(await m.stop()).toBe(0);
  });

  it('an unusable policy stops it before it serves (exit 2, one line)', async () => {
    const h = home({ version: 1, perAsk: { maxUsdc: '1.5' } });
    const r = await cli(h, ['mcp']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: policy file .*perAsk\.maxUsdc: must be a decimal string/);
  });

  it('reserves stdout for the protocol: a stray write goes to stderr', () => {
    const script = `const m = await import(${JSON.stringify(path.join(ROOT, 'build/mcp/stdio.js'))}); const p = m.reserveStdout(); console.log('stray line'); process.stdout.write('stray write\\n'); p.write('{"jsonrpc":"2.0"}\\n');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('{"jsonrpc":"2.0"}\n');
    expect(r.stderr).toBe('stray line\nstray write\n');
  });
});

describe('asking through MCP', () => {
  it('quote → ask (wait, with progress notifications) → result; the result is the document `result --json` prints', async () => {
    const h = home();
    const m = await serve(h);
    const file = askFile(h);
    const q = await m.call('loopsign_quote', { file, paymentMode: 'wallet_calls' });
    expect(q.isError, JSON.stringify(q.doc)).toBe(false);
    expect(q.doc).toMatchObject({ ok: true, operationKey: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(q.doc.service.payment).toBeDefined();

    const before = await balance();
    const progress: string[] = [];
    // A host that resets its timeout on progress may let one call wait longer (replyWithinSeconds, capped).
    const a = await m.call(
      'loopsign_ask',
      { file, paymentMode: 'wallet_calls', wait: true, timeoutSeconds: 240, replyWithinSeconds: 300 },
      { onprogress: (p) => progress.push(String(p.message)), resetTimeoutOnProgress: true },
    );
    expect(a.isError, JSON.stringify(a.doc)).toBe(false);
    expect(a.doc).toMatchObject({
      ok: true,
      status: 'submitted',
      operationKey: q.doc.operationKey,
      paymentMode: 'wallet_calls',
      resumed: false,
      next: [],
    });
    expect(a.doc.result.ready).toBe(true);
    expect(await balance()).toBe(before - 1_500_000n);
    expect(progress.some((p) => /the plan passed every check/.test(p))).toBe(true);
    expect(progress.some((p) => /waiting for|next check/.test(p))).toBe(true);
    // The structured result is what the CLI prints as JSON, field for field.
    const r = await m.call('loopsign_result', { operationKey: a.doc.operationKey });
    expect(r.isError).toBe(false);
    expect(r.doc.ready).toBe(true);
    expect(r.doc).toEqual((await cli(h, ['--json', 'result', '--operation-key', a.doc.operationKey])).json());
    const st = await m.call('loopsign_status', { clientRequestId: JSON.parse(readFileSync(file, 'utf8')).clientRequestId, wait: true });
    expect(st.doc).toMatchObject({ ok: true, operationKey: a.doc.operationKey, ready: true });
    // The same fields as the CLI's, each transaction with its state (the chain's head, read by each, may have moved).
    const viaCli = (await cli(h, ['--json', 'status', '--operation-key', a.doc.operationKey])).json();
    expect(st.doc.transactions.length).toBeGreaterThan(0);
    expect(st.doc.transactions.map((t: { state: string }) => t.state)).toEqual(st.doc.transactions.map(() => 'final'));
    expect({ ...st.doc, finality: undefined }).toEqual({ ...viaCli, finality: undefined });
    expect(st.doc.finality).toMatchObject({ tag: 'finalized', finalizedBlock: expect.any(String) });
    const c = await m.call('loopsign_confirm', { operationKey: a.doc.operationKey });
    expect(c.doc).toMatchObject({ ok: true, operationKey: a.doc.operationKey, status: 'submitted' });
    expect(await m.stop()).toBe(0);
  });

  it('a hostile plan is refused through MCP exactly as through the CLI, and nothing moves', async () => {
    const h = home();
    const m = await serve(h);
    const usdc = await balance();
    const n0 = await nonce();
    await sb.control('/__sandbox/hostile', { scenario: 'inflated_approval', count: 1 });
    const viaMcp = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    await sb.control('/__sandbox/hostile', { scenario: 'inflated_approval', count: 1 });
    const viaCli = await cli(h, ['--json', 'ask', '--file', askFile(h), '--payment-mode', 'wallet_calls']);
    await sb.control('/__sandbox/hostile', undefined, 'DELETE');
    expect(viaCli.code).toBe(5);
    expect(viaMcp.isError).toBe(true);
    const { exitMeaning, ...error } = viaMcp.doc.error;
    expect(error).toEqual(viaCli.json().error);
    expect(error).toMatchObject({ code: 'plan_refused', exitCode: 5, message: expect.stringMatching(/^refused: /) });
    expect(exitMeaning).toMatch(/refused by a safety check/);
    expect(await balance()).toBe(usdc);
    expect(await nonce()).toBe(n0);
    expect(await m.stop()).toBe(0);
  });

  it('a cancelled wait stops waiting and leaves the ask resumable: asked again, it resumes and pays once', async () => {
    // No clock jumps: the round stays open, so the wait can only end by the cancellation.
    await withoutClockJumps(async () => {
      const h = home();
      const m = await serve(h);
      const file = askFile(h);
      const before = await balance();
      const cancel = new AbortController();
      const waiting = m.call(
        'loopsign_ask',
        { file, paymentMode: 'wallet_calls', wait: true, timeoutSeconds: 600, replyWithinSeconds: 300 },
        {
          signal: cancel.signal,
          onprogress: (p) => /waiting for|next check/.test(String(p.message)) && cancel.abort(),
        },
      );
      await expect(waiting).rejects.toThrow();
      await vi.waitFor(() => expect(m.stderr()).toMatch(/"event":"wait\.cancelled"/), { timeout: 30_000, interval: 100 });
      expect(await balance()).toBe(before - 1_500_000n);
      const n0 = await nonce();
      const again = await m.call('loopsign_ask', { file, paymentMode: 'wallet_calls' });
      expect(again.isError, JSON.stringify(again.doc)).toBe(false);
      expect(again.doc).toMatchObject({ ok: true, status: 'submitted', resumed: true });
      expect(await nonce()).toBe(n0);
      expect(await balance()).toBe(before - 1_500_000n);
      expect(await m.stop()).toBe(0);
    });
  });
});

describe('check plan through MCP, offline', () => {
  it('passes a plan the live service returned and refuses it tampered, with the same documents as the CLI', async () => {
    const corpus = readVector('live/asks.json');
    const now = Date.parse(corpus.meta.fixedClock) / 1000;
    const c = corpus.cases.find((x: { id: string }) => x.id === 'baseline-wallet-calls');
    const h = home();
    // Chain 8453, no sandbox, no keystore: the check needs neither.
    const m = await startMcp(h, { args: ['--chain-id', '8453'] });
    sessions.push(m);
    const check = async (name: string, answer: unknown) => {
      const files = [
        '--ask',
        h.file(`${name}-ask.json`, JSON.stringify(c.request.body)),
        '--response',
        h.file(`${name}-answer.json`, JSON.stringify(answer)),
      ];
      const viaMcp = await m.call('loopsign_check_plan', { askFile: files[1], responseFile: files[3], now });
      const viaCli = await runCli(['--json', '--chain-id', '8453', 'check-plan', ...files, '--now', String(now)], h);
      return { viaMcp, viaCli };
    };
    const good = await check('good', c.ask.body);
    expect(good.viaMcp.isError, JSON.stringify(good.viaMcp.doc)).toBe(false);
    expect(good.viaMcp.doc).toMatchObject({ ok: true, passed: true, kind: 'wallet_plan' });
    expect(good.viaMcp.doc).toEqual(good.viaCli.json());
    const tampered = structuredClone(c.ask.body);
    tampered.transactionPlan.calls[1].data = tampered.transactionPlan.calls[1].data.replace(/f4240$/, 'f4241');
    const bad = await check('tampered', tampered);
    expect(bad.viaCli.code).toBe(5);
    expect(bad.viaMcp.isError).toBe(true);
    const { exitMeaning, ...error } = bad.viaMcp.doc.error;
    expect(error).toEqual(bad.viaCli.json().error);
    expect(error).toMatchObject({
      code: 'plan_refused',
      exitCode: 5,
      message: expect.stringMatching(/approval of 1000001 instead of exactly 1000000/),
    });
    expect(exitMeaning).toMatch(/refused by a safety check/);
    expect(await m.stop()).toBe(0);
  });
});

describe('the spending policy through MCP', () => {
  it('per ask: refused with policy_limit, the exit meaning and the hint; nothing signed', async () => {
    const h = home({ version: 1, perAsk: { maxUsdc: '1000000' } });
    const m = await serve(h);
    const n0 = await nonce();
    const r = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(r.isError).toBe(true);
    expect(r.doc).toMatchObject({
      ok: false,
      error: { code: 'policy_limit', limit: 'perAsk', asset: 'USDC', amount: '1500000', left: '1000000', exitCode: 5 },
    });
    expect(r.doc.error.hint).toMatch(/editing its file/);
    expect(r.doc.error.exitMeaning).toMatch(/spending policy/);
    expect(await nonce()).toBe(n0);
    expect(await m.stop()).toBe(0);
  });

  it('per day, across two server processes on one home: the second sees what the first spent; an edited policy applies from the next call', async () => {
    const h = home({ version: 1, rolling24h: { '31337': { maxUsdc: '2000000' } } });
    const first = await serve(h);
    const second = await serve(h);
    const before = await balance();
    const paid = await first.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(paid.isError, JSON.stringify(paid.doc)).toBe(false);
    const refused = await second.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(refused.doc.error).toMatchObject({
      code: 'policy_limit',
      limit: 'the last 24 hours',
      left: '500000',
      amount: '1500000',
      exitCode: 5,
    });
    expect(await balance()).toBe(before - 1_500_000n);
    const left = await first.call('loopsign_policy');
    expect(left.doc.remaining).toEqual([
      expect.objectContaining({ window: 'the last 24 hours', asset: 'USDC', limit: '2000000', used: '1500000', left: '500000' }),
    ]);
    expect({ files: left.doc.files, remaining: left.doc.remaining }).toEqual((await cli(h, ['--json', 'config', 'show'])).json().policy);
    writePolicy(h, { version: 1, rolling24h: { '31337': { maxUsdc: '4000000' } } });
    expect((await second.call('loopsign_policy')).doc.remaining).toEqual([
      expect.objectContaining({ limit: '4000000', used: '1500000', left: '2500000' }),
    ]);
    expect(await first.stop()).toBe(0);
    expect(await second.stop()).toBe(0);
  });

  it('two calls at once in one server against one window: only one pays, the other is refused', async () => {
    const h = home({ version: 1, rolling24h: { '31337': { maxUsdc: '2000000' } } });
    const m = await serve(h);
    const before = await balance();
    const both = await Promise.all([askFile(h), askFile(h)].map((file) => m.call('loopsign_ask', { file, paymentMode: 'wallet_calls' })));
    expect(both.map((r) => r.isError).sort(), JSON.stringify(both.map((r) => r.doc))).toEqual([false, true]);
    expect(both.find((r) => r.isError)!.doc.error).toMatchObject({ code: 'policy_limit', exitCode: 5 });
    expect(await balance()).toBe(before - 1_500_000n);
    expect(await m.stop()).toBe(0);
  });

  it('above the approval threshold: the human approves through elicitation and the spend goes through; a no refuses it', async () => {
    const h = home({ version: 1, approvalThreshold: { maxUsdc: '1000000' } });
    let answer: 'yes' | 'no' = 'yes';
    const m = await serve(h, {
      elicit: async () => (answer === 'yes' ? { action: 'accept', content: { approve: true } } : { action: 'decline' }),
    });
    const before = await balance();
    const ok = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(ok.isError, JSON.stringify(ok.doc)).toBe(false);
    expect(await balance()).toBe(before - 1_500_000n);
    expect(m.elicitations).toHaveLength(1);
    expect(m.elicitations[0]!.message).toMatch(
      /^loopsign asks for your approval: pay 1\.5 USDC .*\nThis is above the approvalThreshold 1 USDC/,
    );
    answer = 'no';
    const n0 = await nonce();
    const declined = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(declined.doc.error).toMatchObject({ code: 'approval_declined', exitCode: 5 });
    expect(m.elicitations).toHaveLength(2);
    expect(await nonce()).toBe(n0);
    expect(await m.stop()).toBe(0);
  });

  it('a host declaring elicitation as the older protocol did (an empty capability: form mode) is asked too', async () => {
    const h = home({ version: 1, approvalThreshold: { maxUsdc: '1000000' } });
    const m = await serve(h, { elicit: async () => ({ action: 'decline' }), elicitCapability: {} });
    const n0 = await nonce();
    const declined = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls' });
    expect(declined.doc.error).toMatchObject({ code: 'approval_declined' });
    expect(m.elicitations).toHaveLength(1);
    expect(await nonce()).toBe(n0);
    expect(await m.stop()).toBe(0);
  });

  it('above the approval threshold without elicitation support: refused, and no argument the agent adds can approve it', async () => {
    const h = home({ version: 1, approvalThreshold: { maxUsdc: '1000000' } });
    const m = await serve(h);
    const n0 = await nonce();
    const r = await m.call('loopsign_ask', { file: askFile(h), paymentMode: 'wallet_calls', approve: true, approved: true, yes: true });
    expect(r.doc.error).toMatchObject({ code: 'approval_required', limit: 'approvalThreshold', exitCode: 5 });
    expect(await nonce()).toBe(n0);
    expect(await m.stop()).toBe(0);
  });
});

describe('rating through MCP', () => {
  it('a staked vote: committed from this machine, the stake paid once', async () => {
    // As in the demo: no clock jump may close the round before the vote is in.
    await withoutClockJumps(async () => {
      const m = await serve(home());
      const id = String((await sb.control('/__sandbox/content', {})).contentId);
      const block = await s.pub.getBlockNumber(); // what was sent after it: refunds of earlier stakes do not count
      const r = await m.call('loopsign_rate', { contentId: id, direction: 'up', prediction: 70, stake: '2' });
      expect(r.isError, JSON.stringify(r.doc)).toBe(false);
      expect(r.doc).toMatchObject({
        ok: true,
        contentId: id,
        stakeWei: '2000000',
        advisory: false,
        commitHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(await tokenSentAfter(s, 'LREP', block)).toBe(2_000_000n);
      // Direction, prediction and salt stay in the journal.
      expect(m.stderr() + JSON.stringify(r.doc)).not.toMatch(/"isUp"|"salt"|"predictedUpBps"/);
      expect(await m.stop()).toBe(0);
    });
  });
});

describe('confidentiality terms over MCP: the person accepts them, never the agent', () => {
  it('put to the person in full through elicitation: a no signs nothing, a yes votes; without elicitation no argument accepts them', async () => {
    await withoutClockJumps(async () => {
      const id = String((await sb.control('/__sandbox/content', { gated: true, details: 'Release 43 is confidential.' })).contentId);
      const liveText: string = readVector('live/terms.json').cases[0].terms.text;
      const vote = { contentId: id, direction: 'up', prediction: 60, stake: '2' };
      // What moved is read from the wallet's own transactions and transfers: the keeper may refund an earlier
      // stake into the same balance at any moment (it settles on its own clock).
      const block = await s.pub.getBlockNumber();
      const n0 = await nonce();

      // A client that cannot elicit: refused, whatever the agent adds (the old acceptTerms, yes).
      const mute = await serve(home());
      const refused = await mute.call('loopsign_rate', { ...vote, acceptTerms: true, yes: true });
      expect(refused.doc.error).toMatchObject({ code: 'terms_not_accepted', exitCode: 2, hint: expect.stringMatching(/elicitation/) });
      expect(await mute.stop()).toBe(0);

      // The person says no: nothing signed, nothing staked.
      let answer: unknown = { action: 'decline' };
      const m = await serve(home(), { elicit: async () => answer as never });
      const declined = await m.call('loopsign_rate', vote);
      expect(declined.doc.error).toMatchObject({ code: 'terms_not_accepted', exitCode: 2 });
      expect(m.elicitations).toHaveLength(1);
      // The whole text is in the question, with the version and where it was saved.
      expect(m.elicitations[0]!.message).toContain(liveText);
      expect(m.elicitations[0]!.message).toMatch(/not your agent.*2026-06-confidential-context-full/s);
      expect(m.elicitations[0]!.message).toContain(declined.doc.error.termsFile);
      expect(await nonce()).toBe(n0);
      expect(await tokenSentAfter(s, 'LREP', block)).toBe(0n);

      // Answers that only look like a yes are a no: "accept" with the string "true", with no content, with approve
      // false beside extra fields.
      const lookalikes = [
        { action: 'accept', content: { approve: 'true' } },
        { action: 'accept' },
        { action: 'accept', content: { approve: false, accept: true, yes: true } },
      ];
      for (const lookalike of lookalikes) {
        answer = lookalike;
        const no = await m.call('loopsign_rate', vote);
        expect(no.doc.error, JSON.stringify(lookalike)).toMatchObject({ code: 'terms_not_accepted', exitCode: 2 });
      }
      expect(m.elicitations).toHaveLength(1 + lookalikes.length);
      expect(await nonce()).toBe(n0);
      expect(await tokenSentAfter(s, 'LREP', block)).toBe(0n);

      // The person says yes: the terms are signed and the vote goes in, its gated context read.
      answer = { action: 'accept', content: { approve: true } };
      const r = await m.call('loopsign_rate', vote);
      expect(r.isError, JSON.stringify(r.doc)).toBe(false);
      expect(m.elicitations).toHaveLength(2 + lookalikes.length);
      expect(r.doc).toMatchObject({ ok: true, contentId: id, stakeWei: '2000000' });
      expect(await tokenSentAfter(s, 'LREP', block)).toBe(2_000_000n);
      expect(await m.stop()).toBe(0);
    });
  });
});

describe('every other tool returns the document its command prints with --json', () => {
  it('templates, wallet address and balance, verify evidence, rate commit, upload image', async () => {
    const h = home();
    const m = await serve(h);
    // The tool, then the command. An answer that reads moving state (`moves`: a balance, which the keeper's refunds of
    // earlier stakes change on its own clock) is also asked of the CLI before the tool: when the CLI's two answers
    // differ, the state moved meanwhile, and the comparison is made again. Every other answer is compared once.
    const same = async (tool: string, args: Record<string, unknown>, cliArgs: string[], moves = false) => {
      for (let attempt = 1; ; attempt++) {
        const before = moves ? await cli(h, ['--json', ...cliArgs]) : undefined;
        const viaMcp = await m.call(tool, args);
        expect(viaMcp.isError, `${tool}: ${JSON.stringify(viaMcp.doc)}`).toBe(false);
        const viaCli = await cli(h, ['--json', ...cliArgs]);
        expect(viaCli.code, viaCli.stdout).toBe(0);
        if (!before || attempt === 3 || JSON.stringify(before.json()) === JSON.stringify(viaCli.json()))
          return { viaMcp: viaMcp.doc, viaCli: viaCli.json() };
      }
    };
    for (const [tool, args, cliArgs] of [
      ['loopsign_templates', {}, ['templates']],
      ['loopsign_wallet_address', {}, ['wallet', 'address']],
      ['loopsign_wallet_balance', {}, ['wallet', 'balance']],
      [
        'loopsign_verify_evidence',
        { file: path.join(VECTORS, 'synthetic-evidence-v4.json'), publicKey: path.join(VECTORS, 'synthetic-evidence-v4.spki.txt') },
        [
          'verify-evidence',
          path.join(VECTORS, 'synthetic-evidence-v4.json'),
          '--public-key',
          path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'),
        ],
      ],
    ] as const) {
      const { viaMcp, viaCli } = await same(tool, args, [...cliArgs], tool === 'loopsign_wallet_balance');
      expect(viaMcp, tool).toEqual(viaCli);
    }

    // Tampered evidence: a tool error with exit meaning 8, as the CLI exits 8.
    const packet = JSON.parse(readFileSync(path.join(VECTORS, 'synthetic-evidence-v4.json'), 'utf8'));
    packet.payload.runId = 'run_tampered';
    const bad = await m.call('loopsign_verify_evidence', {
      file: h.file('tampered.json', JSON.stringify(packet)),
      publicKey: path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'),
    });
    expect(bad.doc.error).toMatchObject({ code: 'evidence_invalid', exitCode: 8, valid: false });

    // A vote commit built offline: tlock ciphertexts differ run to run, everything else is the same.
    const state = await sb.control('/__sandbox/state');
    const runtime = h.file(
      'runtime.json',
      JSON.stringify({
        runtime: {
          roundId: '1',
          roundReferenceRatingBps: '5000',
          epochDuration: '1200',
          drandChainHash: `0x${sb.info.drand.chainHash}`,
          drandGenesisTimeSeconds: String(sb.info.drand.genesis),
          drandPeriodSeconds: String(sb.info.drand.period),
          roundStartTimeSeconds: String(state.now),
          targetRound: null,
        },
      }),
    );
    const voter = `0x${'22'.repeat(20)}`;
    const commit = await same('loopsign_rate_commit', { runtime, voter, contentId: '42', direction: 'up', prediction: '69', stake: 2.5 }, [
      'rate',
      'commit',
      '--offline',
      '--runtime',
      runtime,
      '--voter',
      voter,
      '--content-id',
      '42',
      '--up',
      '--prediction',
      '69',
      '--stake',
      '2.5',
    ]);
    const stable = ({ ciphertext, commitHash, ...rest }: Record<string, unknown>) => (
      expect(ciphertext).toMatch(/^0x/), expect(commitHash).toMatch(/^0x[0-9a-f]{64}$/), rest
    );
    expect(stable(commit.viaMcp)).toEqual(stable(commit.viaCli));
    expect(commit.viaMcp.stakeWei).toBe('2500000');

    // An image uploaded through MCP; the CLI then finds it already uploaded (same file, same wallet).
    const png = await sharp({ create: { width: 1600, height: 900, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    const shot = path.join(h.dir, 'shot.png');
    writeFileSync(shot, png);
    const image = await same('loopsign_upload_image', { files: [shot] }, ['upload-image', shot]);
    expect(image.viaMcp.images[0]).toMatchObject({ file: shot, ok: true, imageUrl: expect.stringMatching(/#sha256=0x[0-9a-f]{64}$/) });
    expect(image.viaMcp.images[0].reused, 'the tool uploads it: nothing ran before it').toBeFalsy();
    expect(image.viaCli.images[0]).toMatchObject({ reused: true, imageUrl: image.viaMcp.images[0].imageUrl });
    expect(await m.stop()).toBe(0);
  });
});

describe("files a tool may read (issue 20 §3): the host's roots, never loopsign's own secrets", () => {
  // A password file and a policy inside the host's root, a link to the password inside the root, the kernel's view of
  // the server's environment, a file outside every root: each named to every tool that reads a file.
  it('refuses each, and no byte of what they hold appears in the answer', async () => {
    const h = home({ version: 1, perAsk: { maxUsdc: '9000000' } });
    const password = `hunter2-${process.pid}-${n++}`;
    const pwFile = h.passwordFile(password);
    const link = path.join(h.dir, 'innocent.json');
    symlinkSync(pwFile, link);
    const outsideDir = mkdtempSync(path.join(tmpdir(), 'loopsign-outside-'));
    const outside = path.join(outsideDir, 'private.json');
    writeFileSync(outside, JSON.stringify({ diary: 'secret-diary-entry' }));
    const policyFile = path.join(h.env.XDG_CONFIG_HOME, 'loopsign', 'policy.json');
    const m = await serve(h, { env: { LOOPSIGN_PASSWORD_FILE: pwFile, SOME_SERVER_SETTING: 'environ-marker-7f3a' } });
    const targets: [string, RegExp][] = [
      [pwFile, /loopsign's own secrets/],
      [link, /loopsign's own secrets/],
      [policyFile, /loopsign's own secrets/],
      ['/proc/self/environ', /pseudo-filesystem/],
      [outside, /outside the folders/],
    ];
    const calls = (file: string): [string, Record<string, unknown>][] => [
      ['loopsign_check_plan', { askFile: file, responseFile: file }],
      ['loopsign_quote', { file }],
      ['loopsign_ask', { file: askFile(h), detailsFile: file }],
      ['loopsign_ask', { file }],
      [
        'loopsign_rate_commit',
        { runtime: file, voter: `0x${'22'.repeat(20)}`, contentId: '42', direction: 'up', prediction: '60', stake: '1' },
      ],
      ['loopsign_upload_image', { files: [file] }],
      ['loopsign_verify_evidence', { file }],
      ['loopsign_budget', { grant: file }],
    ];
    const before = await nonce();
    for (const [file, why] of targets) {
      for (const [tool, args] of calls(file)) {
        const r = await m.call(tool, args);
        const text = JSON.stringify(r.result);
        expect(r.isError, `${tool} ${file}: ${text}`).toBe(true);
        expect(r.doc.error, `${tool} ${file}`).toMatchObject({ code: 'file_not_allowed', exitCode: 5 });
        expect(r.doc.error.message, `${tool} ${file}`).toMatch(why);
        // Nothing the file holds, and not its SHA-256 either (detailsFile would hash it).
        const digest = file === '/proc/self/environ' ? undefined : createHash('sha256').update(readFileSync(file)).digest('hex');
        for (const secret of [password, 'environ-marker-7f3a', 'secret-diary-entry', '9000000', ...(digest ? [digest] : [])])
          expect(text, `${tool} ${file}`).not.toContain(secret);
        capture.count('MCP file reads refused', `${tool} ${path.basename(file)}`);
      }
    }
    expect(await nonce()).toBe(before);
    await m.stop();
    // The password file lives in the root only for this test; the final scan of every home must not meet it.
    rmSync(link);
    rmSync(pwFile);
  });

  // Inside the root, three things that are not what a path check sees: another name of the password file (a hard
  // link: its path is in the root, its content is the secret's), a FIFO (a read would wait for a writer for ever,
  // holding the server), and a link whose target the kernel cannot name as a path (/proc/self/fd/0: the server's own
  // stdin, the host's JSON-RPC channel, which a read would drain).
  it("refuses a hard link to a secret, a FIFO and a link to the server's stdin, and goes on answering", async () => {
    const h = home();
    const password = `hunter3-${process.pid}-${n++}`;
    const pwFile = h.passwordFile(password);
    const hard = path.join(h.dir, 'notes.txt');
    linkSync(pwFile, hard);
    const fifo = path.join(h.dir, 'plan.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const stdin = path.join(h.dir, 'answer.json');
    symlinkSync('/proc/self/fd/0', stdin);
    const m = await serve(h, { env: { LOOPSIGN_PASSWORD_FILE: pwFile } });
    const digest = createHash('sha256').update(readFileSync(pwFile)).digest('hex');
    const calls = (file: string): [string, Record<string, unknown>][] => [
      ['loopsign_check_plan', { askFile: file, responseFile: file }],
      ['loopsign_quote', { file }],
      ['loopsign_ask', { file: askFile(h), detailsFile: file }],
      [
        'loopsign_rate_commit',
        { runtime: file, voter: `0x${'22'.repeat(20)}`, contentId: '42', direction: 'up', prediction: '60', stake: '1' },
      ],
      ['loopsign_upload_image', { files: [file] }],
      ['loopsign_verify_evidence', { file }],
      ['loopsign_budget', { grant: file }],
    ];
    for (const [file, why] of [
      [hard, /other names/],
      [fifo, /not a regular file/],
      [stdin, /does not lead to a file path/],
    ] as const) {
      for (const [tool, args] of calls(file)) {
        // A refusal is immediate; a read that waits for ever is a failure, not a slow answer.
        const r = await m.call(tool, args, { timeout: 60_000 });
        const text = JSON.stringify(r.result);
        expect(r.doc.error, `${tool} ${file}: ${text}`).toMatchObject({ code: 'file_not_allowed', exitCode: 5 });
        expect(r.doc.error.message, `${tool} ${file}`).toMatch(why);
        for (const secret of [password, digest]) expect(text, `${tool} ${file}`).not.toContain(secret);
        capture.count('MCP file reads refused', `${tool} ${path.basename(file)}`);
      }
    }
    expect((await m.call('loopsign_policy', {})).isError).toBe(false);
    await m.stop();
    for (const f of [hard, fifo, stdin, pwFile]) rmSync(f);
  });

  // The images an ask file names are files the agent names too: each goes through the same gate, after the ask file
  // itself (the server here unlocks the sandbox's wallet, so the ask gets as far as its images).
  it("images an ask file names: loopsign's keystore, its database and log, /proc, a file outside the roots, a hard link, a FIFO, all refused", async () => {
    const h = home();
    const m = await serve(h);
    await m.call('loopsign_policy', {}); // the database exists (and its log) before it is named
    const db = path.join(h.env.XDG_STATE_HOME, 'loopsign', 'loopsign.db');
    const outsideDir = mkdtempSync(path.join(tmpdir(), 'loopsign-outside-'));
    const outside = path.join(outsideDir, 'shot.png');
    writeFileSync(outside, 'not really an image');
    const hard = path.join(h.dir, 'shot.png');
    linkSync(sb.info.devWallet.passwordFile, hard);
    const fifo = path.join(h.dir, 'shot.webp');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const before = await nonce();
    for (const image of [sb.info.devWallet.keystore, db, `${db}-wal`, '/proc/self/environ', outside, hard, fifo]) {
      const file = askFile(h, {
        question: { title: `MCP images ${n}`, contextUrl: 'https://example.com/mcp', categoryId: '1', tags: ['mcp'], imageFiles: [image] },
      });
      const r = await m.call('loopsign_ask', { file }, { timeout: 60_000 });
      expect(r.doc.error, `${image}: ${JSON.stringify(r.doc)}`).toMatchObject({ code: 'file_not_allowed', exitCode: 5 });
      expect(r.doc.error.message).toContain('an image the ask names');
      capture.count('MCP file reads refused', `loopsign_ask imageFiles ${path.basename(image)}`);
    }
    expect(await nonce()).toBe(before);
    await m.stop();
    for (const f of [hard, fifo]) rmSync(f);
  });

  // A file the server may read, named where a JSON file belongs: the answer says what is wrong, never what it says.
  // (The evidence reader's strict pass once quoted a number-like run: "number 4111-1111-1111-1111… is out of range".)
  it('errors about a readable file that is not JSON never quote it', async () => {
    const h = home();
    const file = h.file('card.txt', 'card 4111-1111-1111-1111 pin 2468-1357\n');
    const m = await serve(h);
    const calls: [string, Record<string, unknown>][] = [
      ['loopsign_check_plan', { askFile: file, responseFile: file }],
      ['loopsign_quote', { file }],
      [
        'loopsign_rate_commit',
        { runtime: file, voter: `0x${'22'.repeat(20)}`, contentId: '42', direction: 'up', prediction: '60', stake: '1' },
      ],
      ['loopsign_verify_evidence', { file }],
      ['loopsign_verify_evidence', { file, kind: 'audit' }],
      ['loopsign_verify_evidence', { file, kind: 'coverage' }],
      ['loopsign_budget', { grant: file }],
    ];
    for (const [tool, args] of calls) {
      const r = await m.call(tool, args);
      const text = JSON.stringify(r.result);
      expect(r.isError, `${tool}: ${text}`).toBe(true);
      for (const part of ['4111', '1111-', '2468', '1357']) expect(text, `${tool} ${JSON.stringify(args)}`).not.toContain(part);
    }
    await m.stop();
  });

  it('a host that declares no roots, and a server started without --root, reads no file at all; --root opens one folder', async () => {
    const h = home();
    const file = askFile(h);
    const closed = await serve(h, { roots: false });
    const r = await closed.call('loopsign_quote', { file });
    expect(r.doc.error).toMatchObject({ code: 'file_not_allowed', exitCode: 5 });
    expect(r.doc.error.hint).toMatch(/--root DIR/);
    await closed.stop();
    const opened = await serve(h, { roots: false, rootArgs: [h.dir] });
    const q = await opened.call('loopsign_quote', { file });
    expect(q.isError, JSON.stringify(q.doc)).toBe(false);
    await opened.stop();
  });
});

describe('what the servers printed and wrote', () => {
  it('stdout held only JSON-RPC, and no secret appears in any output or file', async () => {
    expect(sessions.length).toBeGreaterThan(8);
    for (const m of sessions) {
      if (m.child.exitCode === null) await m.stop();
      expect(nonProtocolLines(m.stdout())).toEqual([]);
      expect(m.stdout().split('\n').filter(Boolean).length).toBeGreaterThan(1);
      expect(findSecret(m.stdout() + m.stderr())).toBeUndefined();
    }
    for (const h of homes) for (const f of filesUnder(h.dir)) expect(findSecret(readFileSync(f, 'utf8')), f).toBeUndefined();
  });
});
