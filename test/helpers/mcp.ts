// Starts `loopsign mcp` (the built binary) as a host would and connects the official SDK client over its stdio.
// Every byte the server writes is kept: stopping a session fails if stdout carried anything but JSON-RPC messages
// or if stdout or stderr carried a known secret (and both go to the capture for the scan after the whole run).
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { capture } from './capture.js';
import { BIN, childEnv, findSecret, ROOT, type Home } from './cli.js';

/** A client transport over a child's stdin/stdout that also records the raw stdout. */
class ChildTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly child: ChildProcess,
    private readonly raw: { stdout: string },
  ) {}

  async start(): Promise<void> {
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.raw.stdout += chunk.toString('utf8');
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (!message) break;
        this.onmessage?.(message);
      }
    });
    this.child.on('close', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin!.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
  }
}

export interface McpSession {
  client: Client;
  child: ChildProcess;
  /** Elicitation requests the server sent (the client answered with `elicit`). */
  elicitations: ElicitRequest['params'][];
  stdout(): string;
  stderr(): string;
  /** A tool call's result document: structuredContent, or the parsed error document of a tool error. */
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: Parameters<Client['callTool']>[2],
  ): Promise<{ isError: boolean; doc: any; result: CallToolResult }>;
  /** Ends the session (closes stdin), waits for the server to exit, checks its stdout and the secrets. */
  stop(): Promise<number | null>;
}

export interface McpOptions {
  /** Global options before `mcp`. */
  args?: string[];
  env?: Record<string, string | undefined>;
  /** Declare elicitation and answer each request with this; without it the client has no elicitation support. */
  elicit?: (request: ElicitRequest['params']) => Promise<ElicitResult>;
  /** The elicitation capability as declared: `{ form: {} }` (default) or the older protocol's empty `{}`. */
  elicitCapability?: Record<string, unknown>;
  /**
   * The folders the host declares as MCP roots (as Claude Code or VS Code declare the workspace): default the test home
   * and the vendored fixtures; `false` declares no roots capability at all.
   */
  roots?: string[] | false;
  /** `mcp --root DIR` for each. */
  rootArgs?: string[];
}

export async function startMcp(home: Home, options: McpOptions = {}): Promise<McpSession> {
  const child = spawn(process.execPath, [BIN, ...(options.args ?? []), 'mcp', ...(options.rootArgs ?? []).flatMap((r) => ['--root', r])], {
    env: childEnv(home, options.env),
    cwd: home.dir,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const raw = { stdout: '', stderr: '' };
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (raw.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const elicitations: ElicitRequest['params'][] = [];
  const roots = options.roots === undefined ? [home.dir, path.join(ROOT, 'test', 'fixtures')] : options.roots;
  const client = new Client(
    { name: 'loopsign-test-host', version: '1.0.0' },
    {
      capabilities: {
        ...(options.elicit ? { elicitation: options.elicitCapability ?? { form: {} } } : {}),
        ...(roots ? { roots: { listChanged: false } } : {}),
      },
    },
  );
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: path.basename(r) })),
    }));
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params);
      return answer(request.params);
    });
  }
  await client.connect(new ChildTransport(child, raw));
  return {
    client,
    child,
    elicitations,
    stdout: () => raw.stdout,
    stderr: () => raw.stderr,
    call: async (name, args = {}, callOptions) => {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000, ...callOptions })) as CallToolResult;
      const doc = result.isError ? JSON.parse((result.content[0] as { text: string }).text) : result.structuredContent;
      return { isError: result.isError === true, doc, result };
    },
    stop: async () => {
      await client.close();
      const code = await exited;
      capture.run(['mcp', ...(options.args ?? [])], raw.stdout, raw.stderr);
      const leaked = findSecret(raw.stdout) ?? findSecret(raw.stderr);
      if (leaked) throw new Error(`secret leaked by loopsign mcp: ${leaked.slice(0, 6)}…`);
      const stray = nonProtocolLines(raw.stdout);
      if (stray.length) throw new Error(`loopsign mcp wrote something other than JSON-RPC to stdout: ${stray[0]!.slice(0, 200)}`);
      return code;
    },
  };
}

/** Lines of stdout that are not one JSON-RPC 2.0 message each. */
export function nonProtocolLines(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .filter((l) => {
      try {
        return (JSON.parse(l) as { jsonrpc?: unknown }).jsonrpc !== '2.0';
      } catch {
        return true;
      }
    });
}
