// `loopsign mcp` as agent hosts drive it (issue 22), in process: the server loopsign builds, connected to the official
// SDK client over the SDK's InMemoryTransport, against the sandbox started in this process (its anvil, contracts and
// service on loopback). An inline ask with a bonus, paid and followed to its result through repeated short calls —
// each answering within the SDK client's default 60 s request timeout, pending until the round settles — and the same
// continued after a server restart from the journal; a cancelled call that never stops a payment; the built-in
// default policy of a server with no policy file; and every tool's document equal to its command's --json.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { createPublicClient, erc20Abi, http, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startInProcess, type InProcess } from './helpers/in-process.js';
import { buildMcpServer, jobsEnded, type McpSetup } from '../src/mcp/server.js';
import { createContext } from '../src/context.js';
import { Output } from '../src/output.js';
import * as lookupCommands from '../src/commands/lookups.js';
import * as walletCommands from '../src/commands/wallet.js';
import * as checkPlanCommand from '../src/commands/check-plan.js';

let env: InProcess;
/** The server's environment, as `loopsign mcp` takes it from its process at start: the harness's, plus the chain. */
let serverEnv: Record<string, string | undefined>;
let pub: PublicClient;
let n = 0;
const open: { client: Client; server: McpServer }[] = [];

beforeAll(async () => {
  env = await startInProcess();
  pub = createPublicClient({ transport: http(env.sb.manifest.rpcUrl), pollingInterval: 50 }) as PublicClient;
  serverEnv = { ...env.env, LOOPSIGN_CHAIN_ID: '31337' };
}, 120_000);
beforeEach(async () => {
  // The round of a new ask stays open until a test lets the clock jump (the raters vote meanwhile).
  await env.control('/__sandbox/settings', { autoAdvance: false, pollAfterMs: 200 });
});
afterEach(async () => {
  for (const c of open.splice(0)) await c.client.close().catch(() => undefined);
  delete serverEnv.LOOPSIGN_PRIVATE_KEY;
});
afterAll(async () => {
  await env?.stop();
});

/** A fresh key, funded on the sandbox chain, as the server's signer (LOOPSIGN_PRIVATE_KEY in its environment). */
async function wallet(): Promise<`0x${string}`> {
  const key = generatePrivateKey();
  const { address } = privateKeyToAccount(key);
  await env.control('/__sandbox/fund', { address, usdc: '50000000', lrep: '50000000', eth: '10' });
  serverEnv.LOOPSIGN_PRIVATE_KEY = key;
  return address;
}

const usdc = (address: Hex) =>
  pub.readContract({ address: env.sb.manifest.tokens.USDC.address as Hex, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
const nonce = (address: Hex) => pub.getTransactionCount({ address });

/** The server as `loopsign mcp` builds it, and the SDK client a host runs, linked in memory. */
async function connect(
  setup: Omit<McpSetup, 'env'> = {},
  flags: Record<string, string> = {},
): Promise<{ client: Client; server: McpServer }> {
  // Quiet: progress reaches the client, not this test's stderr.
  const server = await buildMcpServer({ quiet: true, ...flags }, { env: serverEnv, ...setup });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'loopsign-test-host', version: '1.0.0' });
  await client.connect(clientSide);
  const pair = { client, server };
  open.push(pair);
  return pair;
}

/**
 * A tool call with the SDK client's defaults: its 60 s request timeout, not reset on progress — a call that took
 * longer would fail here with the SDK's RequestTimeout, as it does in a host.
 */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  progress?: string[],
): Promise<{ isError: boolean; doc: any }> {
  const result = (await client.callTool(
    { name, arguments: args },
    undefined,
    progress ? { onprogress: (p) => void progress.push(String(p.message)) } : {},
  )) as CallToolResult;
  return {
    isError: result.isError === true,
    doc: result.isError ? JSON.parse((result.content[0] as { text: string }).text) : result.structuredContent,
  };
}

function inlineAsk(extra: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return {
    chainId: 31337,
    clientRequestId: `mcp-jobs-${process.pid}-${n}-${Date.now()}`,
    maxPaymentAmount: '1500000',
    bounty: { amount: '1000000', asset: 'USDC', requiredVoters: '3' },
    feedbackBonus: { amount: '500000', asset: 'USDC' },
    question: { title: `Inline question ${n}`, contextUrl: 'https://example.com/mcp-jobs', categoryId: '1', tags: ['mcp'] },
    ...extra,
  };
}

/**
 * Calls `args` and then its continuation until the answer is no longer pending; `onPending` sees each pending answer
 * (a test lets the round settle from there). Every answer is kept.
 */
async function follow(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onPending: (doc: any) => Promise<void> | void = () => undefined,
) {
  const answers: any[] = [];
  const progress: string[] = [];
  let next = { tool: name, arguments: args };
  for (let i = 0; i < 200; i++) {
    const r = await call(client, next.tool, next.arguments, progress);
    answers.push(r.doc);
    if (r.isError || r.doc.pending !== true) return { last: r, answers, progress };
    expect(r.doc.continueWith.tool).toBe(name);
    next = r.doc.continueWith;
    await onPending(r.doc);
  }
  throw new Error('still pending after 200 calls');
}

/** Lets the sandbox's clock jump once the run is past paying: the raters' votes then settle the round. */
const settleOnceWaiting = async (doc: any) => {
  if (doc.job.progress.some((p: string) => /waiting for|next check/.test(p)))
    await env.control('/__sandbox/settings', { autoAdvance: true });
};

/**
 * As settleOnceWaiting, from the n-th pending answer on: until then the round cannot settle (its clock stands), so a
 * call is answered pending at least n times however fast the payment went.
 */
const settleOnceWaitingAfter = (n: number) => {
  let seen = 0;
  return async (doc: any) => {
    if (++seen >= n) await settleOnceWaiting(doc);
  };
};

describe('a long call answers within its budget, pending until done', () => {
  it('an inline ask with a bonus, paid once and followed to its result through repeated short calls', async () => {
    const address = await wallet();
    const { client } = await connect();
    const before = await usdc(address);
    const ask = inlineAsk();
    const args = { ask, paymentMode: 'wallet_calls', wait: true, replyWithinSeconds: 1 };
    const { last, answers, progress } = await follow(client, 'loopsign_ask', args, settleOnceWaitingAfter(2));
    expect(last.isError, JSON.stringify(last.doc)).toBe(false);
    expect(last.doc).toMatchObject({ ok: true, status: 'submitted', clientRequestId: ask.clientRequestId, resumed: false, next: [] });
    expect(last.doc.pending).toBeUndefined();
    expect(last.doc.feedbackBonus).toMatchObject({ status: 'funded', amount: '500000' });
    expect(last.doc.result.ready).toBe(true);
    expect(before - (await usdc(address))).toBe(1_500_000n);
    // Pending answers, each with the exact call that continues it (the same arguments, the inline ask included) and
    // what the journal knows: the same operation throughout, its transactions as they were signed and mined.
    const pending = answers.slice(0, -1);
    expect(pending.length).toBeGreaterThanOrEqual(2);
    for (const p of pending) {
      expect(p).toMatchObject({ ok: true, pending: true, continueWith: { tool: 'loopsign_ask', arguments: args } });
      // On a loaded machine the first second can end before the journal is opened: nothing is known yet then, and
      // what is known later is always this operation's.
      if (p.known !== undefined) expect(p.known).toMatchObject({ clientRequestId: ask.clientRequestId, operation: last.doc.operation });
      expect(p.message).toMatch(/not done within 1 s.*continueWith/);
    }
    expect(pending.at(-1).known).toMatchObject({ clientRequestId: ask.clientRequestId, operation: last.doc.operation });
    const lastPending = pending.at(-1);
    expect(lastPending.known.operationKey).toBe(last.doc.operationKey);
    expect(lastPending.known.transactions.map((t: { stage: string; status: string }) => t.status)).toEqual(
      lastPending.known.transactions.map(() => 'mined'),
    );
    expect(lastPending.known.transactions.map((t: { stage: string }) => t.stage)).toContain('bonus');
    // Progress notifications reached the calls that followed.
    expect(progress.some((p) => /the plan passed every check/.test(p))).toBe(true);
  }, 300_000);

  it('after a server restart, the continuation resumes from the journal and pays nothing again', async () => {
    const address = await wallet();
    const first = await connect();
    const before = await usdc(address);
    const args = {
      ask: inlineAsk({ feedbackBonus: undefined, maxPaymentAmount: '1000000' }),
      paymentMode: 'wallet_calls',
      wait: true,
      replyWithinSeconds: 1,
    };
    // Followed on the first server until the ask is paid and only its wait is left; then that server goes away.
    let waiting: any;
    for (
      let r = await call(first.client, 'loopsign_ask', args);
      ;
      r = await call(first.client, 'loopsign_ask', r.doc.continueWith.arguments)
    ) {
      expect(r.isError, JSON.stringify(r.doc)).toBe(false);
      expect(r.doc.pending).toBe(true);
      if (r.doc.job.progress.some((p: string) => /waiting for|next check/.test(p))) {
        waiting = r.doc;
        break;
      }
    }
    expect(before - (await usdc(address))).toBe(1_000_000n);
    await first.client.close();
    // Gone as a process that exits is: once its job has ended (its claim on the operation released).
    await jobsEnded(first.server);
    const n0 = await nonce(address);
    const second = await connect();
    const { last } = await follow(second.client, waiting.continueWith.tool, waiting.continueWith.arguments, settleOnceWaiting);
    expect(last.isError, JSON.stringify(last.doc)).toBe(false);
    expect(last.doc).toMatchObject({ ok: true, status: 'submitted', resumed: true, operationKey: waiting.known.operationKey });
    expect(last.doc.result.ready).toBe(true);
    expect(await nonce(address)).toBe(n0);
    expect(before - (await usdc(address))).toBe(1_000_000n);
  }, 300_000);

  it('cancelling a call stops its wait, never the payment under way; calling again resumes it, paid once', async () => {
    const address = await wallet();
    const { client } = await connect();
    const before = await usdc(address);
    const args = {
      ask: inlineAsk({ feedbackBonus: undefined, maxPaymentAmount: '1000000' }),
      paymentMode: 'wallet_calls',
      wait: true,
      replyWithinSeconds: 60,
    };
    const cancel = new AbortController();
    // Cancelled as soon as the run starts asking the service: before anything is signed.
    const call1 = client.callTool({ name: 'loopsign_ask', arguments: args }, undefined, {
      signal: cancel.signal,
      onprogress: (p) => /asking the service/.test(String(p.message)) && cancel.abort(),
    });
    await expect(call1).rejects.toThrow();
    // The payment under way goes through on its own (only the wait stopped), once.
    await vi.waitFor(async () => expect(before - (await usdc(address))).toBe(1_000_000n), { timeout: 120_000, interval: 200 });
    // The same call again picks it up.
    const again = await follow(client, 'loopsign_ask', { ...args, replyWithinSeconds: 1 }, settleOnceWaiting);
    expect(again.last.isError, JSON.stringify(again.last.doc)).toBe(false);
    expect(again.last.doc).toMatchObject({ status: 'submitted', resumed: true });
    expect(before - (await usdc(address))).toBe(1_000_000n);
  }, 300_000);
});

describe('with no policy file, the built-in default applies', () => {
  it('an ask above 5 USDC is refused before anything is signed; loopsign_policy says it is the default and how to change it', async () => {
    const address = await wallet();
    const { client } = await connect();
    const n0 = await nonce(address);
    const over = await call(client, 'loopsign_ask', {
      ask: inlineAsk({
        bounty: { amount: '6000000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: undefined,
        maxPaymentAmount: '6000000',
      }),
      paymentMode: 'wallet_calls',
    });
    expect(over.isError).toBe(true);
    expect(over.doc.error).toMatchObject({
      code: 'policy_limit',
      limit: 'perAsk',
      asset: 'USDC',
      amount: '6000000',
      left: '5000000',
      builtInDefault: true,
      exitCode: 5,
    });
    expect(over.doc.error.message).toMatch(/above perAsk 5 USDC of the built-in default policy of loopsign mcp/);
    expect(over.doc.error.hint).toMatch(/policy\.json .*LOOPSIGN_POLICY in the server's environment/);
    // Above the approval threshold (2 USDC) with no one to ask: refused too.
    const unapproved = await call(client, 'loopsign_ask', {
      ask: inlineAsk({
        bounty: { amount: '3000000', asset: 'USDC', requiredVoters: '3' },
        feedbackBonus: undefined,
        maxPaymentAmount: '3000000',
      }),
      paymentMode: 'wallet_calls',
    });
    expect(unapproved.doc.error).toMatchObject({
      code: 'approval_required',
      limit: 'approvalThreshold',
      builtInDefault: true,
      exitCode: 5,
    });
    expect(await nonce(address)).toBe(n0);

    const policy = await call(client, 'loopsign_policy', {});
    expect(policy.doc).toMatchObject({
      ok: true,
      chainId: 31337,
      builtInDefault: true,
      files: [{ source: 'built-in default', file: 'the built-in default policy of loopsign mcp' }],
    });
    expect(policy.doc.files[0].policy).toMatchObject({
      perAsk: { maxUsdc: '5000000' },
      approvalThreshold: { maxUsdc: '2000000' },
      rolling24h: { '31337': { maxUsdc: '20000000' } },
      perRating: { maxStakeLrep: '5000000' },
    });
    expect(policy.doc.remaining).toEqual(
      expect.arrayContaining([expect.objectContaining({ window: 'the last 24 hours', asset: 'USDC', limit: '20000000' })]),
    );
    expect(policy.doc.howToChange).toMatch(/built-in default applies .*5 USDC per ask.*policy\.json/);
  });

  it('a policy file replaces the default whole', async () => {
    await wallet();
    const dir = env.paths.config;
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify({ version: 1, perAsk: { maxUsdc: '7000000' } }));
    try {
      const { client } = await connect();
      const policy = await call(client, 'loopsign_policy', {});
      expect(policy.doc).toMatchObject({ builtInDefault: false, files: [{ file, source: 'config folder' }], remaining: [] });
      expect(policy.doc.howToChange).toMatch(/edit the policy files/);
    } finally {
      rmSync(file);
    }
  });
});

describe('tools on the core', () => {
  it('an inline ask and its file are one ask: the same checks, the same quote document as `quote --json`, the same journal', async () => {
    const address = await wallet();
    const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-jobs-'));
    const { client } = await connect({ roots: [dir] });
    const ask = inlineAsk({ feedbackBonus: undefined, maxPaymentAmount: '1000000' });
    const file = path.join(dir, 'ask.json');
    writeFileSync(file, JSON.stringify(ask));

    // The quote: the tool's document is the one the command prints with --json, inline or from the file.
    const inline = await call(client, 'loopsign_quote', { ask, paymentMode: 'wallet_calls' });
    const fromFile = await call(client, 'loopsign_quote', { file, paymentMode: 'wallet_calls' });
    expect(inline.isError, JSON.stringify(inline.doc)).toBe(false);
    expect(steady(fromFile.doc)).toEqual(steady(inline.doc));
    expect(steady(await printedBy('lookups', 'quote', { file, paymentMode: 'wallet_calls' }))).toEqual(steady(inline.doc));

    // Paid from the file; the same ask inline is the same operation, resumed, nothing paid again.
    const before = await usdc(address);
    const paid = await follow(client, 'loopsign_ask', { file, paymentMode: 'wallet_calls' });
    expect(paid.last.doc).toMatchObject({ status: 'submitted', resumed: false, operationKey: inline.doc.operationKey });
    const n0 = await nonce(address);
    const again = await follow(client, 'loopsign_ask', { ask, paymentMode: 'wallet_calls' });
    expect(again.last.doc).toMatchObject({
      status: 'submitted',
      resumed: true,
      operation: paid.last.doc.operation,
      operationKey: inline.doc.operationKey,
    });
    expect(await nonce(address)).toBe(n0);
    expect(before - (await usdc(address))).toBe(1_000_000n);
    // And the other documents too: `wallet address --json`, `templates --json`.
    expect((await call(client, 'loopsign_wallet_address', {})).doc).toEqual(await printedBy('wallet', 'walletAddress', {}));
    expect((await call(client, 'loopsign_templates', {})).doc).toEqual(await printedBy('lookups', 'templates', {}));
  }, 300_000);

  it('an inline ask is checked exactly as its file; exactly one of the two; image files it names are read only through the file gate', async () => {
    await wallet();
    const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-jobs-'));
    const { client } = await connect({ roots: [dir] });
    const bad = inlineAsk({ bounty: { amount: '-1', asset: 'USDC', requiredVoters: '3' } });
    const inline = await call(client, 'loopsign_ask', { ask: bad });
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const fromFile = await call(client, 'loopsign_ask', { file });
    expect(inline.doc.error).toMatchObject({ code: 'invalid_ask', exitCode: 2 });
    expect(inline.doc.error.message).toMatch(/^the inline ask: /);
    expect(inline.doc.error.message.replace('the inline ask', file)).toBe(fromFile.doc.error.message);
    expect(inline.doc.error.field).toBe(fromFile.doc.error.field);

    for (const args of [{}, { file, ask: bad }]) {
      const r = await call(client, 'loopsign_quote', args);
      expect(r.doc.error).toMatchObject({ code: 'invalid_arguments', exitCode: 2 });
      expect(r.doc.error.message).toMatch(/give file \(a path\) or ask \(the JSON object itself\), exactly one/);
    }

    // An image outside the server's folders, named in an inline ask: refused, nothing read, nothing signed.
    const outside = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-outside-'));
    writeFileSync(path.join(outside, 'shot.png'), 'not read');
    const ask = inlineAsk({ feedbackBonus: undefined, maxPaymentAmount: '1000000' });
    (ask.question as Record<string, unknown>).imageFiles = [path.join(outside, 'shot.png')];
    const refused = await call(client, 'loopsign_ask', { ask, paymentMode: 'wallet_calls' });
    expect(refused.doc.error).toMatchObject({ code: 'file_not_allowed', exitCode: 5 });
    expect(refused.doc.error.message).toMatch(/an image the ask names .*shot\.png is outside the folders this server may read/);
  }, 120_000);

  it('check_plan takes the ask and the answer inline: the same verdicts and documents as `check-plan --json` on files', async () => {
    const corpus = JSON.parse(readFileSync(path.join('test', 'fixtures', 'vectors', 'live', 'asks.json'), 'utf8'));
    const now = Date.parse(corpus.meta.fixedClock) / 1000;
    const c = corpus.cases.find((x: { id: string }) => x.id === 'baseline-wallet-calls');
    // Chain 8453, as the live corpus: no sandbox, no wallet needed.
    const { client } = await connect({}, { chainId: '8453' });
    const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-jobs-'));
    const viaFiles = async (answer: unknown) => {
      const [ask, response] = [path.join(dir, 'ask.json'), path.join(dir, 'answer.json')];
      writeFileSync(ask, JSON.stringify(c.request.body));
      writeFileSync(response, JSON.stringify(answer));
      return printedBy('check-plan', 'checkPlan', { ask, response, now: String(now) }, { chainId: '8453' }).catch((e: unknown) => e);
    };
    const good = await call(client, 'loopsign_check_plan', { ask: c.request.body, response: c.ask.body, now });
    expect(good.isError, JSON.stringify(good.doc)).toBe(false);
    expect(good.doc).toMatchObject({ ok: true, passed: true, kind: 'wallet_plan' });
    expect(good.doc).toEqual(await viaFiles(c.ask.body));
    const tampered = structuredClone(c.ask.body);
    tampered.transactionPlan.calls[1].data = tampered.transactionPlan.calls[1].data.replace(/f4240$/, 'f4241');
    const bad = await call(client, 'loopsign_check_plan', { ask: c.request.body, response: tampered, now });
    expect(bad.doc.error).toMatchObject({
      code: 'plan_refused',
      exitCode: 5,
      message: expect.stringMatching(/approval of 1000001 instead of exactly 1000000/),
    });
    expect(await viaFiles(tampered)).toMatchObject({ code: 'plan_refused', message: bad.doc.error.message });
    const missing = await call(client, 'loopsign_check_plan', { ask: c.request.body });
    expect(missing.doc.error).toMatchObject({ code: 'invalid_arguments', issues: [{ path: ['responseFile'] }] });
  });

  it('the tools that spend say so; those that wait take a budget with a cap and answer pending', async () => {
    const { client } = await connect();
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
    for (const name of ['loopsign_ask', 'loopsign_rate']) {
      expect(tools[name]!.annotations, name).toMatchObject({ destructiveHint: true, openWorldHint: true, readOnlyHint: false });
      expect(tools[name]!.inputSchema.properties!.replyWithinSeconds, name).toMatchObject({ type: 'number', maximum: 300 });
      expect(Object.keys(tools[name]!.outputSchema!.properties!), name).toEqual(
        expect.arrayContaining(['pending', 'continueWith', 'known']),
      );
    }
    for (const name of ['loopsign_quote', 'loopsign_ask', 'loopsign_check_plan'])
      expect(tools[name]!.inputSchema.properties!.ask, name).toMatchObject({ type: 'object' });
  });
});

/** What a command's handler prints with --json, run in this process with the same configuration. */
async function printedBy(
  module: 'lookups' | 'wallet' | 'check-plan',
  handler: string,
  options: Record<string, unknown>,
  flags: Record<string, string> = {},
): Promise<unknown> {
  let stdout = '';
  const sink = { write: (s: string) => ((stdout += s), true) } as unknown as NodeJS.WritableStream;
  const out = new Output(
    { json: true, quiet: true, debug: false },
    { stdout: sink, stderr: { write: () => true } as unknown as NodeJS.WritableStream },
  );
  const m = { lookups: lookupCommands, wallet: walletCommands, 'check-plan': checkPlanCommand }[module] as unknown as Record<
    string,
    (...a: unknown[]) => Promise<void>
  >;
  await m[handler]!(createContext({ flags: { json: true, ...flags }, out, env: serverEnv }), options, []);
  return JSON.parse(stdout);
}

/** A quote without the one field that moves with the sandbox's clock. */
function steady(doc: any): any {
  const copy = structuredClone(doc);
  delete copy.service?.fastLane?.estimatedResultAt;
  return copy;
}
