// An MCP client that reads only tools/list can build a valid ask (issue 36 §1, §2): loopsign_quote's and
// loopsign_ask's `ask` argument carries the ask's real JSON Schema (properties, required fields, enums, patterns,
// descriptions that state the units, a worked example). A JSON Schema validator (ajv, the one the MCP SDK itself
// uses) accepts a correct ask and refuses the natural wrong guess; loopsign's answer to that guess, over the real MCP
// protocol (the SDK client, in memory), lists every problem at once with the atomic amount the guess probably meant;
// and the ask fixed from that one answer is sent on the next call: two calls in all.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { buildMcpServer } from '../src/mcp/server.js';

const GUESS = { question: 'Is this landing page clear to a first-time visitor?', bounty: '1.5 USDC' };
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
/** The ask a client writes from the schema's own descriptions and example. */
const CORRECT = {
  chainId: 8453,
  clientRequestId: 'landing-page-clarity-1',
  maxPaymentAmount: '1500000',
  bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
  question: {
    title: 'Is this landing page clear to a first-time visitor?',
    contextUrl: 'https://example.com/landing',
    categoryId: '1',
    tags: ['landing-page'],
  },
  walletAddress: WALLET,
};

let dir: string;
let service: Server;
/** What reached the "service" (a loopback HTTP server that records each request and refuses it with a 400). */
const received: { method: string; url: string; body: any }[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-ask-schema-'));
  service = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, body: text ? JSON.parse(text) : undefined });
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_arguments', message: 'recorded by the test; nothing is priced' }));
    });
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});
afterAll(async () => {
  await new Promise((resolve) => service.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function connect(): Promise<Client> {
  // The server's whole environment: an empty XDG home, chain 8453, the recording service as its base URL.
  const env = {
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    LOOPSIGN_CHAIN_ID: '8453',
    LOOPSIGN_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
  };
  const server = await buildMcpServer({}, { env });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'loopsign-test', version: '0.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

const errorDoc = (result: Awaited<ReturnType<Client['callTool']>>) => {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content as { text: string }[])[0]!.text) as { error: Record<string, any> };
};

describe("the ask's schema in tools/list", () => {
  it('a JSON Schema validator accepts a correct ask and refuses the natural guess, naming each missing field', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    for (const name of ['loopsign_quote', 'loopsign_ask']) {
      const tool = tools.find((t) => t.name === name)!;
      const ask = (tool.inputSchema.properties as Record<string, any>).ask;
      expect(ask.required, name).toEqual(['chainId', 'clientRequestId', 'maxPaymentAmount', 'bounty']);
      // bounty and roundConfig: oneOf the live shape and the interface document's (seed) shape.
      const [liveBounty, seedBounty] = ask.properties.bounty.oneOf;
      expect([liveBounty.title, seedBounty.title], name).toEqual(['live shape', expect.stringMatching(/^interface \(seed\) shape/)]);
      expect(liveBounty.required, name).toEqual(['amount']);
      expect(liveBounty.properties.amount.description, name).toMatch(/atomic units.*1 USDC = "1000000"/);
      expect(liveBounty.properties.amount.pattern, name).toBe('^[1-9][0-9]{6,}$');
      expect(ask.properties.question.required, name).toEqual(['title', 'categoryId', 'tags']);
      expect(ask.properties.chainId.enum, name).toContain(8453);
      expect(ask.examples?.[0]?.bounty?.amount, name).toBe('1500000');

      const validate = new Ajv({ strict: true, allowUnionTypes: true }).compile(tool.inputSchema);
      expect(validate({ ask: CORRECT }), JSON.stringify(validate.errors)).toBe(true);
      // One example of each shape, both valid.
      expect(ask.examples.map((e: any) => e.roundConfig?.epochDuration !== undefined)).toEqual([false, true]);
      for (const example of ask.examples) expect(validate({ ask: example }), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ ask: GUESS })).toBe(false);
      const all = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true }).compile(tool.inputSchema);
      all({ ask: GUESS });
      const said = all.errors!.map((e) => `${e.instancePath} ${e.message}`).join('\n');
      for (const field of ['chainId', 'clientRequestId', 'maxPaymentAmount']) expect(said, name).toContain(`'${field}'`);
      expect(said).toMatch(/\/ask\/bounty must be object/);
      expect(said).toMatch(/\/ask\/question must be object/);
    }
  });

  it("loopsign's answer to the guess lists every problem at once, with the atomic amount it probably meant; the fixed ask is sent on the next call", async () => {
    const client = await connect();
    let calls = 0;
    const quote = async (ask: unknown) => (calls++, client.callTool({ name: 'loopsign_quote', arguments: { ask } }));

    const first = errorDoc(await quote(GUESS));
    expect(first.error).toMatchObject({ code: 'invalid_ask', exitCode: 2 });
    const problems = first.error.problems as { field: string; message: string; fix?: string }[];
    expect(problems.map((p) => p.field).sort()).toEqual(['bounty', 'chainId', 'clientRequestId', 'maxPaymentAmount', 'question']);
    const by = Object.fromEntries(problems.map((p) => [p.field, p]));
    expect(by.bounty!.message).toContain('did you mean {"amount": "1500000", "asset": "USDC"}?');
    expect(by.question!.message).toContain(`"title": ${JSON.stringify(GUESS.question)}`);
    expect(by.maxPaymentAmount!.message).toMatch(/atomic units \(1 USDC = "1000000"\)/);
    // Each fix is the field's own description, as tools/list advertises it (a model reads the same words twice).
    const advertised = (
      (await client.listTools()).tools.find((t) => t.name === 'loopsign_quote')!.inputSchema.properties as Record<string, any>
    ).ask.properties as Record<string, { description: string }>;
    for (const p of problems) expect(p.fix, p.field).toBe(advertised[p.field]!.description);
    expect(by.bounty!.fix).toContain('{"amount": "1500000", "asset": "USDC"');
    for (const p of problems) expect(first.error.message).toContain(`${p.field}: ${p.message}`);
    expect(received).toEqual([]);

    // A display amount where atomic units belong: the value it probably meant, never a silent conversion.
    const display = errorDoc(await quote({ ...CORRECT, bounty: { amount: '1.5', asset: 'USDC' }, maxPaymentAmount: '1.5 USDC' }));
    calls--; // a check of the messages, not a step of the fix
    expect(display.error.problems.map((p: { field: string }) => p.field)).toEqual(['bounty.amount', 'maxPaymentAmount']);
    for (const p of display.error.problems) expect(p.message).toContain('did you mean "1500000"?');
    expect(received).toEqual([]);

    // The second call, with every named field fixed as the answer said: the ask passes and is sent to the service.
    const second = errorDoc(await quote(CORRECT));
    expect(second.error.code).not.toBe('invalid_ask');
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /api/agent/quote']);
    expect(received[0]!.body).toMatchObject({ ...CORRECT });
    expect(calls).toBe(2);
  });

  it('the seed-shaped example is taken and sent translated; an ask breaking rules across fields gets them all in one answer', async () => {
    const client = await connect();
    received.splice(0);
    const ask = ((await client.listTools()).tools.find((t) => t.name === 'loopsign_quote')!.inputSchema.properties as Record<string, any>)
      .ask;
    const quote = async (a: unknown) => client.callTool({ name: 'loopsign_quote', arguments: { ask: a } });

    const seedShaped = errorDoc(await quote({ ...ask.examples[1], walletAddress: WALLET }));
    expect(seedShaped.error.code).not.toBe('invalid_ask');
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /api/agent/quote']);
    expect(received[0]!.body.roundConfig).toEqual({ questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' });
    expect(received[0]!.body.bounty).toEqual({ amount: '1500000', asset: 'USDC', requiredVoters: '3' });

    const broken = errorDoc(
      await quote({
        ...CORRECT,
        clientRequestId: 'x',
        paymentMode: 'x402_authorization',
        maxPaymentAmount: '1000000',
        bounty: { ...CORRECT.bounty, asset: 'LREP' },
        question: { ...CORRECT.question, categoryId: '9' },
      }),
    );
    const problems = broken.error.problems as { field: string; message: string; fix?: string }[];
    expect(problems.map((p) => p.field)).toEqual(['clientRequestId', 'question.categoryId', 'maxPaymentAmount', 'paymentMode']);
    // Each fix says what that field takes, in the words an agent can act on.
    const fix = Object.fromEntries(problems.map((p) => [p.field, p.fix ?? '']));
    expect(fix.clientRequestId).toMatch(/4-160 letters, digits/);
    expect(fix['question.categoryId']).toMatch(/"1" to "8".*1 Products.*8 General/);
    expect(fix.maxPaymentAmount).toMatch(/at least the bounty plus a feedback bonus.*1 USDC = "1000000"/);
    expect(fix.paymentMode).toMatch(/x402: a single question with a USDC bounty/);
    expect(received).toHaveLength(1);
  });
});
