// One tool call: a fresh Context (the server's global options; an Output that writes nothing to stdout; the
// elicitation approver when the client can ask its user; the request's abort signal), then the very handler the
// CLI runs for the same command, so every spend passes the same guards, ledger and policy. Its `--json` document
// becomes the tool's structured result; a failure becomes a tool error carrying loopsign's error document
// (src/mcp/tool-errors.ts).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Handler } from '../commands/define.js';
import type { GlobalFlags } from '../config.js';
import { createContext } from '../context.js';
import { jsonText, Output } from '../output.js';
import { elicitationApprover, elicitationAsker } from './approval.js';
import type { FileGate } from '../files.js';
import type { ResolvedSigner } from '../wallet/signers/spec.js';
import type { LogLevel } from './log-level.js';
import { toolError } from './tool-errors.js';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a tool runs: a command's handler with the options and arguments commander would have given it. */
export interface Invocation {
  handler: Handler<any>;
  options: object;
  args?: unknown[];
}

export interface Tool<I extends z.ZodRawShape> {
  name: `loopsign_${string}`;
  title: string;
  /** One line an agent can act on. */
  description: string;
  input: I;
  /** The `--json` document of the command (`ok: true` and its fields). */
  output: z.ZodObject;
  /** The handler and its options; every path the agent names goes through `files` first. */
  invoke(input: z.infer<z.ZodObject<I>>, files: FileGate): Promise<Invocation>;
}

/** Typed helper for declaring a tool (the input type flows into `invoke`). */
export const tool = <I extends z.ZodRawShape>(t: Tool<I>): Tool<I> => t;

/**
 * The Output a tool's handler writes to. The result goes into a buffer, never to stdout; progress becomes MCP
 * progress notifications (when the caller sent a progressToken) and JSON lines on stderr; warnings become MCP
 * log messages and stderr lines. JSON mode, so the document is exactly what `--json` prints, and so no terminal
 * prompt can ever be shown.
 */
class ToolOutput extends Output {
  private step = 0;

  constructor(
    flags: GlobalFlags,
    private readonly extra: Extra,
    private readonly logs: LogLevel,
    private readonly sink = captureSink(),
  ) {
    super({ json: true, quiet: flags.quiet === true, debug: flags.debug === true }, { stdout: sink.stream, stderr: process.stderr });
  }

  document(): Record<string, unknown> | undefined {
    const text = this.sink.text();
    return text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  }

  override progress(event: string, message: string, data: Record<string, unknown> = {}): void {
    const token = this.extra._meta?.progressToken;
    if (token !== undefined) this.notify({ method: 'notifications/progress', params: { progressToken: token, progress: ++this.step, message } });
    if (!this.options.quiet) super.progress(event, message, data);
  }

  override warn(message: string, data: Record<string, unknown> = {}): void {
    if (this.logs.allows('warning')) this.notify({ method: 'notifications/message', params: { level: 'warning', logger: 'loopsign', data: { message } } });
    super.warn(message, data);
  }

  private notify(notification: ServerNotification): void {
    // A notification the client no longer wants (the call was cancelled, the host went away) is nothing to fail on.
    this.extra.sendNotification(notification).catch(() => undefined);
  }
}

function captureSink() {
  let text = '';
  const stream = { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream;
  return { stream, text: () => text };
}

export async function runTool(server: McpServer, flags: GlobalFlags, extra: Extra, logs: LogLevel, files: FileGate, signer: ResolvedSigner | undefined, invocation: (files: FileGate) => Promise<Invocation>): Promise<CallToolResult> {
  const out = new ToolOutput(flags, extra, logs);
  try {
    const { handler, options, args } = await invocation(files);
    // No one to ask when the client cannot elicit: the policy then refuses a spend above its threshold, and
    // confidentiality terms are not accepted.
    const ask = elicitationAsker(server, extra);
    const ctx = createContext({ flags, out, approver: elicitationApprover(ask), signal: extra.signal, askPerson: ask, files, ...(signer ? { signer } : {}) });
    await handler(ctx, { ...flags, ...options }, args ?? []);
    const doc = out.document();
    if (!doc) throw new Error('the command printed no result');
    return { content: [{ type: 'text', text: jsonText(doc) }], structuredContent: doc };
  } catch (error) {
    return toolError(error, flags.debug === true);
  }
}
