// `loopsign mcp`'s protocol behaviour, in process: the server loopsign builds, connected to the official SDK client
// over the SDK's InMemoryTransport (no sandbox, no subprocess). Tool annotations (spending and signing tools are
// destructive and open-world, reads are read-only), logging/setLevel honoured, and every tool error — a schema
// mismatch included — is loopsign's error document with a hint an MCP user can act on.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  EmptyResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { buildMcpServer } from '../src/mcp/server.js';
import { mcpHint } from '../src/mcp/tool-errors.js';

let dir: string;
const saved = { ...process.env };
const clients: Client[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'loopsign-mcp-protocol-'));
  // Nothing of this machine's configuration: an empty XDG home, no LOOPSIGN_ variables.
  for (const k of Object.keys(process.env)) if (/^(LOOPSIGN_|XDG_)/.test(k)) delete process.env[k];
  Object.assign(process.env, {
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    LOOPSIGN_CHAIN_ID: '31337',
  });
});
afterEach(async () => {
  delete process.env.LOOPSIGN_PRIVATE_KEY;
  delete process.env.LOOPSIGN_KEYSTORE;
  for (const c of clients.splice(0)) await c.close();
});
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

async function connect(): Promise<{ client: Client; logs: LoggingMessageNotification['params'][] }> {
  const server = await buildMcpServer({}, { env: process.env });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'loopsign-test', version: '0.0.0' });
  const logs: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  await client.connect(clientSide);
  clients.push(client);
  return { client, logs };
}

/** The error document a tool error carries as its text. */
function errorDoc(result: Awaited<ReturnType<Client['callTool']>>): { ok: false; error: Record<string, any> } {
  expect(result.isError).toBe(true);
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  return JSON.parse(text);
}

describe('annotations', () => {
  it('tools that pay, stake or sign are destructive and open-world; pure reads are read-only', async () => {
    const { client } = await connect();
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.annotations]));
    for (const name of ['loopsign_ask', 'loopsign_rate', 'loopsign_upload_image'])
      expect(tools[name], name).toMatchObject({ destructiveHint: true, openWorldHint: true, readOnlyHint: false });
    for (const name of [
      'loopsign_templates',
      'loopsign_quote',
      'loopsign_status',
      'loopsign_result',
      'loopsign_wallet_balance',
      'loopsign_budget',
    ])
      expect(tools[name], name).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    for (const name of [
      'loopsign_wallet_address',
      'loopsign_policy',
      'loopsign_check_plan',
      'loopsign_rate_commit',
      'loopsign_verify_evidence',
    ])
      expect(tools[name], name).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(tools.loopsign_confirm).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    // Every tool says what it does: none is left to a host's defaults (which assume destructive).
    for (const [name, a] of Object.entries(tools)) expect(a?.readOnlyHint, name).toBeTypeOf('boolean');
  });
});

describe('logging/setLevel', () => {
  const KEY = `0x${'5a'.repeat(32)}`;

  it('a warning is sent until the host raises the level above it, and again once it lowers it', async () => {
    const { client, logs } = await connect();
    process.env.LOOPSIGN_PRIVATE_KEY = KEY;
    const call = () => client.callTool({ name: 'loopsign_wallet_address', arguments: {} });
    {
      const r = await call();
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    }
    expect(logs.map((l) => l.level)).toEqual(['warning']);
    expect(await client.setLoggingLevel('error')).toEqual({});
    expect((await call()).isError).toBeFalsy();
    expect(logs).toHaveLength(1);
    await client.setLoggingLevel('debug');
    await call();
    expect(logs.map((l) => l.level)).toEqual(['warning', 'warning']);
  });

  it('an unknown level is refused with invalid params', async () => {
    const { client } = await connect();
    await expect(
      client.request({ method: 'logging/setLevel', params: { level: 'loud' as never } }, EmptyResultSchema),
    ).rejects.toMatchObject({ code: -32602 });
  });
});

describe('tool errors are loopsign error documents', () => {
  it('arguments the input schema refuses: invalid_arguments, exit 2, nothing run', async () => {
    const { client } = await connect();
    const missing = errorDoc(await client.callTool({ name: 'loopsign_quote', arguments: {} }));
    expect(missing).toMatchObject({
      ok: false,
      error: {
        code: 'invalid_arguments',
        exitCode: 2,
        exitMeaning: expect.stringMatching(/^usage or invalid input/),
        tool: 'loopsign_quote',
      },
    });
    expect(missing.error.message).toMatch(/^invalid arguments for loopsign_quote: file: /);
    expect(missing.error.hint).toMatch(/inputSchema of loopsign_quote/);
    const wrong = errorDoc(
      await client.callTool({ name: 'loopsign_rate', arguments: { contentId: '1', direction: 'sideways', prediction: 50, stake: 0 } }),
    );
    expect(wrong.error).toMatchObject({ code: 'invalid_arguments', exitCode: 2 });
    expect(wrong.error.issues.map((i: { path: string[] }) => i.path.join('.'))).toEqual(['direction']);
  });

  it('an unknown tool is a protocol error (invalid params) carrying the document', async () => {
    const { client } = await connect();
    const error = await client.callTool({ name: 'loopsign_nope', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32602, data: { ok: false, error: { code: 'unknown_tool', exitCode: 2 } } });
    expect((error as Error).message).toBe('MCP error -32602: loopsign has no tool "loopsign_nope"');
  });

  it("a failure inside the command: the hint names the server's environment, not a CLI flag", async () => {
    const { client } = await connect();
    process.env.LOOPSIGN_KEYSTORE = path.join(dir, 'no-such-keystore.json');
    const doc = errorDoc(await client.callTool({ name: 'loopsign_wallet_address', arguments: {} }));
    expect(doc.error).toMatchObject({ code: 'keystore_not_found', exitCode: 6 });
    expect(doc.error.hint).toMatch(/LOOPSIGN_KEYSTORE in the server's environment/);
    expect(doc.error.hint).not.toMatch(/--[a-z]/);
  });

  it('CLI hints are rewritten for MCP: server-wide flags become settings, per-command flags become arguments', () => {
    expect(mcpHint('rpc_unreachable', 'check --rpc-url and that the node is running')).toMatch(
      /^check LOOPSIGN_RPC_URL in the server's environment .*\(or rpcUrl in the config file\) and that the node is running$/,
    );
    expect(mcpHint('chain_mismatch', 'run with --chain-id 8453, or change chainId in the file')).toMatch(
      /^run with LOOPSIGN_CHAIN_ID=8453 in the server's environment/,
    );
    expect(
      mcpHint('wait_timeout', `run \`loopsign status --operation-key 0x${'ab'.repeat(32)} --wait\` later; waiting again is safe`),
    ).toBe(`run loopsign_status {operationKey: "0x${'ab'.repeat(32)}", wait: true} later; waiting again is safe`);
    expect(mcpHint('password_required', 'give --password-file FILE, or set LOOPSIGN_PASSWORD')).toMatch(/no terminal/);
    expect(mcpHint('policy_limit', 'raise the limit by editing its file')).toBe('raise the limit by editing its file');
  });
});
