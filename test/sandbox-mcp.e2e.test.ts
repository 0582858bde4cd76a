// The sandbox's two MCP endpoints answer the protocol's edge cases as the service does (its route handlers: the
// public endpoint on main, app/api/mcp/public/route.ts; the workspace endpoint on tokenless,
// app/api/agent/v1/mcp/route.ts): version negotiation within the service's own versions, the protocol-version
// header, GET and DELETE on the workspace endpoint, and the public tools' listed schemas and annotations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { api, type SandboxHandle } from './helpers/sandbox.js';
import { openSession } from './helpers/chain.js';

let sb: SandboxHandle;
let base: string;
let key: string;

beforeAll(async () => {
  ({ sb } = await openSession());
  base = sb.info.baseUrl;
  key = readFileSync((sb.info as any).workspace.apiKeyFile, 'utf8').trim();
  await sb.control('/__sandbox/settings', { workspaceMcpLimit: 10_000, rateLimits: { mcp: 10_000 } });
});
afterAll(async () => {
  await sb?.stop();
});

const initialize = (id: number, protocolVersion: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'loopsign-test', version: '0.0.0' } },
});
const toolsList = { jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} };
const STREAM = { accept: 'application/json, text/event-stream' };
const workspace = (body: unknown, headers: Record<string, string> = {}) =>
  api(base, 'POST', '/api/agent/v1/mcp', body, { ...STREAM, authorization: `Bearer ${key}`, ...headers });
const publicMcp = (body: unknown, headers: Record<string, string> = {}) =>
  api(base, 'POST', '/api/mcp/public', body, { ...STREAM, ...headers });

describe('version negotiation: only the versions the service speaks, and every call works after it', () => {
  it('public endpoint: 2025-06-18 is echoed; 2025-03-26 and 2024-11-05 get 2025-11-25', async () => {
    for (const [asked, answered] of [
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-11-25'],
      ['2024-11-05', '2025-11-25'],
      ['1999-01-01', '2025-11-25'],
    ]) {
      const init = await publicMcp(initialize(1, asked!));
      expect(init.body.result.protocolVersion, asked).toBe(answered);
      const list = await publicMcp(toolsList, { 'mcp-protocol-version': init.body.result.protocolVersion });
      expect(list.body.result?.tools?.length, asked).toBeGreaterThan(0);
    }
  });

  it('workspace endpoint: 2025-03-26 and 2025-06-18 are echoed; 2024-11-05 gets 2025-11-25', async () => {
    for (const [asked, answered] of [
      ['2025-03-26', '2025-03-26'],
      ['2025-06-18', '2025-06-18'],
      ['2024-11-05', '2025-11-25'],
    ]) {
      const init = await workspace(initialize(1, asked!));
      expect(init.body.result.protocolVersion, asked).toBe(answered);
      const list = await workspace(toolsList, { 'mcp-protocol-version': init.body.result.protocolVersion });
      expect(list.status, asked).toBe(200);
      expect(list.body.result.tools.length, asked).toBeGreaterThan(0);
    }
  });

  it('the official SDK client, which offers the newest version, works on both', async () => {
    const client = new Client({ name: 'loopsign-test', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/api/agent/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    expect(client.getServerVersion()?.name).toBe('rateloop-tokenless-workspace');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });
});

describe('the MCP-Protocol-Version header', () => {
  it("workspace endpoint: an unsupported version is 400; a blank or missing one is the older clients' 2025-03-26", async () => {
    const bad = await workspace({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '2024-01-01' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: -32000, data: { code: 'unsupported_protocol_version' } });
    for (const header of [{}, { 'mcp-protocol-version': '' }, { 'mcp-protocol-version': ' 2025-11-25 ' }]) {
      const ok = await workspace({ jsonrpc: '2.0', id: 2, method: 'ping' }, header);
      expect(ok.status, JSON.stringify(header)).toBe(200);
      expect(ok.body.result, JSON.stringify(header)).toEqual({});
    }
  });

  it("public endpoint: a JSON-RPC error in a 200 answer with the supported versions in the service's order (the service does not send 400 here)", async () => {
    const bad = await publicMcp(toolsList, { 'mcp-protocol-version': '2024-01-01' });
    expect(bad.status).toBe(200);
    expect(bad.body.error).toEqual({
      code: -32000,
      message: 'Unsupported MCP-Protocol-Version: 2024-01-01.',
      data: { supportedProtocolVersions: ['2025-06-18', '2025-11-25'] },
    });
  });
});

describe("GET and DELETE on the workspace endpoint: the service's order of checks", () => {
  const get = (headers: Record<string, string>, method = 'GET') =>
    fetch(`${base}/api/agent/v1/mcp`, { method, headers }).then(async (r) => ({
      status: r.status,
      body: await r.json(),
      headers: r.headers,
    }));
  // A getter: the key is read in beforeAll, after this block is collected.
  const auth = () => ({ authorization: `Bearer ${key}` });

  it('protocol version, then Accept, then the session id, then the credential', async () => {
    const version = await get({ ...auth(), accept: 'text/event-stream', 'mcp-protocol-version': '2024-01-01' });
    expect([version.status, version.body.error.data.code]).toEqual([400, 'unsupported_protocol_version']);
    const accept = await get({ ...auth(), accept: 'application/json' });
    expect([accept.status, accept.body.error.message]).toEqual([406, 'Accept must include text/event-stream.']);
    const noSession = await get({ ...auth(), accept: 'text/event-stream' });
    expect([noSession.status, noSession.body.error.message, noSession.body.error.data.code]).toEqual([
      400,
      'MCP-Session-Id is required.',
      'mcp_session_required',
    ]);
    const noKey = await get({ accept: 'text/event-stream', 'mcp-session-id': 'mcps_x' });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    // Sessions belong to OAuth connections only: a workspace key never has one.
    const keySession = await get({ ...auth(), accept: 'text/event-stream', 'mcp-session-id': 'mcps_x' });
    expect([keySession.status, keySession.body.error.message]).toEqual([400, 'MCP session is unavailable.']);
    const origin = await get({ ...auth(), accept: 'text/event-stream', origin: 'https://evil.example' });
    expect(origin.status).toBe(403);
  });

  it('DELETE: no Accept rule; the session id, then the credential', async () => {
    const noSession = await get({ ...auth(), accept: 'application/json' }, 'DELETE');
    expect([noSession.status, noSession.body.error.message]).toEqual([400, 'MCP-Session-Id is required.']);
    const version = await get({ ...auth(), 'mcp-protocol-version': 'nope', 'mcp-session-id': 'mcps_x' }, 'DELETE');
    expect([version.status, version.body.error.data.code]).toEqual([400, 'unsupported_protocol_version']);
    const keySession = await get({ ...auth(), 'mcp-session-id': 'mcps_x' }, 'DELETE');
    expect([keySession.status, keySession.body.error.message]).toEqual([400, 'MCP session is unavailable.']);
  });
});

describe('the public tools as the service lists them', () => {
  it('input schemas with the required fields, tiers, workflows and annotations', async () => {
    const { body } = await publicMcp(toolsList, { 'mcp-protocol-version': '2025-11-25' });
    const tools = Object.fromEntries(body.result.tools.map((t: any) => [t.name, t]));
    expect(body.result.tools.map((t: any) => t.name)).toEqual([
      'rateloop_list_result_templates',
      'rateloop_prepare_image_upload',
      'rateloop_upload_image',
      'rateloop_get_image_upload_status',
      'rateloop_quote_question',
      'rateloop_ask_humans',
      'rateloop_confirm_ask_transactions',
      'rateloop_confirm_feedback_bonus_transactions',
      'rateloop_get_question_status',
      'rateloop_get_result',
      'rateloop_get_rating_context',
      'rateloop_accept_confidentiality_terms',
      'rateloop_prepare_rating_transactions',
      'rateloop_confirm_rating_transactions',
      'rateloop_get_rating_status',
    ]);
    const quote = tools.rateloop_quote_question;
    expect(quote.inputSchema.required).toEqual(['clientRequestId', 'bounty']);
    expect(quote.inputSchema.properties.walletAddress.pattern).toBe('^0x[a-fA-F0-9]{40}$');
    expect(quote.inputSchema.properties.bounty.required).toEqual(['amount']);
    expect(quote.inputSchema.properties.question.required).toEqual(['title', 'categoryId', 'tags']);
    expect(tools.rateloop_ask_humans.inputSchema.anyOf).toContainEqual({ required: ['clientRequestId', 'bounty', 'maxPaymentAmount'] });
    expect(tools.rateloop_prepare_rating_transactions.inputSchema.required).toEqual([
      'contentId',
      'roundId',
      'roundReferenceRatingBps',
      'targetRound',
      'drandChainHash',
      'commitHash',
      'ciphertext',
      'stakeWei',
      'frontend',
    ]);
    expect(tools.rateloop_prepare_image_upload.inputSchema.required).toEqual(['filename', 'mimeType', 'sha256', 'sizeBytes']);
    expect(tools.rateloop_confirm_rating_transactions.inputSchema.required).toEqual(['contentId', 'transactionHashes']);
    expect(tools.rateloop_get_image_upload_status.inputSchema).toMatchObject({ additionalProperties: false, required: ['attachmentId'] });
    for (const t of ['rateloop_ask_humans', 'rateloop_prepare_rating_transactions', 'rateloop_upload_image'])
      expect(tools[t].annotations, t).toMatchObject({ destructiveHint: true, openWorldHint: true, readOnlyHint: false });
    for (const t of ['rateloop_quote_question', 'rateloop_get_result', 'rateloop_get_question_status', 'rateloop_list_result_templates'])
      expect(tools[t].annotations, t).toMatchObject({ readOnlyHint: true });
    expect([
      tools.rateloop_quote_question.rateLoopTier,
      tools.rateloop_ask_humans.rateLoopTier,
      tools.rateloop_list_result_templates.rateLoopWorkflow,
    ]).toEqual(['primary', 'advanced', 'reference']);
    expect(tools.rateloop_quote_question.title).toBe('Quote Human Ask');
  });
});
