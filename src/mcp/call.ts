// What a tool is, and the Context one run of it gets. A tool checks its arguments with its input schema, then calls
// the very core function its command calls (runAsk, the lookups, runRate, …) with the checked request type — never a
// command handler with commander-shaped options, so a renamed field is a compile error — and returns the fields of
// the document that command prints with --json (the same pure function builds both: src/commands/*). Every path an
// agent names goes through the run's file gate (ctx.files) first. The server (server.ts) turns the fields into the
// printed document, or a failure into loopsign's error document (tool-errors.ts).
import type { Env } from '../env.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { GlobalFlags } from '../config.js';
import { createContext, type Context } from '../context.js';
import type { FileGate } from '../files.js';
import { Output } from '../output.js';
import type { ResolvedSigner } from '../wallet/signers/spec.js';
import { elicitationApprover, elicitationAsker, type AskingFor } from './approval.js';
import type { LogLevel } from './log-level.js';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A tool's checked arguments. */
export type Input<I extends z.ZodRawShape> = z.infer<z.ZodObject<I>>;

export interface Tool<I extends z.ZodRawShape> {
  name: `loopsign_${string}`;
  title: string;
  /** One line an agent can act on. */
  description: string;
  input: I;
  /** The `--json` document of the command (`ok: true` and its fields). */
  output: z.ZodObject;
  /** Pairs of arguments of which exactly one must be given: a path, or the same JSON inline (checked before `run`). */
  exactlyOne?: [path: string, inline: string][];
  /** The command's core call with the checked arguments: the fields of its `--json` document (beside `ok: true`). */
  run(ctx: Context, input: Input<I>): Promise<Record<string, unknown>>;
  /**
   * For a tool whose calls can outlast a host's request timeout (it pays and waits, or waits): such a call runs as a
   * job in the server and answers within its budget, pending if not done (src/mcp/jobs.ts).
   */
  job?: {
    /** Whether this call runs as a job (default: every call of the tool). */
    when?(input: Input<I>): boolean;
    /** What a pending answer reports beside the job's progress: what loopsign's database knows so far. */
    known?(ctx: Context, input: Input<I>): Promise<Record<string, unknown>>;
  };
}

/** Typed helper for declaring a tool (the input type flows into `run`). */
export const tool = <I extends z.ZodRawShape>(t: Tool<I>): Tool<I> => t;

/**
 * The calls following one run. Each hears its progress as MCP progress notifications under its own progressToken,
 * numbered in its own count; a call that has answered (pending, cancelled) hears nothing more. Warnings go to the host
 * once, as log messages, at the level the host set.
 */
export class Audience {
  private readonly calls = new Map<Extra, { step: number }>();

  constructor(
    private readonly server: McpServer,
    private readonly logs: LogLevel,
  ) {}

  get size(): number {
    return this.calls.size;
  }

  join(extra: Extra): void {
    this.calls.set(extra, { step: 0 });
  }

  leave(extra: Extra): void {
    this.calls.delete(extra);
  }

  progress(message: string): void {
    for (const [extra, call] of this.calls) {
      const token = extra._meta?.progressToken;
      if (token !== undefined)
        send(
          extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++call.step, message } }),
        );
    }
  }

  warn(message: string): void {
    if (!this.logs.allows('warning')) return;
    const notification: ServerNotification = {
      method: 'notifications/message',
      params: { level: 'warning', logger: 'loopsign', data: { message } },
    };
    const first = this.calls.keys().next().value;
    send(first ? first.sendNotification(notification) : this.server.server.notification(notification));
  }
}

// A notification the client no longer wants (the call was cancelled, the host went away) is nothing to fail on.
const send = (sent: Promise<void>) => void sent.catch(() => undefined);

/**
 * The Output of a run: JSON mode (no terminal prompt can ever be shown); progress to the audience and as JSON lines
 * on stderr (hosts keep stderr as the server's log), warnings as log messages and stderr lines. Nothing reaches
 * stdout, which is the protocol's.
 */
export class RunOutput extends Output {
  constructor(
    flags: GlobalFlags,
    private readonly audience: Audience,
    env: Env,
    private readonly onProgress: (event: string, message: string) => void = () => undefined,
  ) {
    super({ json: true, quiet: flags.quiet === true, debug: flags.debug === true }, { stdout: NOWHERE, stderr: process.stderr }, env);
  }

  override progress(event: string, message: string, data: Record<string, unknown> = {}): void {
    this.audience.progress(message);
    this.onProgress(event, message);
    if (!this.options.quiet) super.progress(event, message, data);
  }

  override warn(message: string, data: Record<string, unknown> = {}): void {
    this.audience.warn(message);
    super.warn(message, data);
  }
}

const NOWHERE = { write: () => true } as unknown as NodeJS.WritableStream;

/** What every run of one server shares. */
export interface ServerRun {
  server: McpServer;
  flags: GlobalFlags;
  files: FileGate;
  /** The environment taken when the server started (its process's): every run reads its variables here. */
  env: Env;
  /** The signer fixed when the server started. */
  signer?: ResolvedSigner;
}

/**
 * The Context of one run: the server's global options and fixed signer, the run's Output and signal, the file gate,
 * and the person at the host for approvals and terms (elicitation) when the client can show them a form. With no
 * policy file, the built-in default policy (src/policy/default.ts): an agent never spends without a limit.
 */
export function runContext(s: ServerRun, out: Output, asking: AskingFor): Context {
  const ask = elicitationAsker(s.server, asking);
  const approver = elicitationApprover(ask);
  const ctx: Context = createContext({
    flags: s.flags,
    out,
    approver,
    signal: asking.signal,
    askPerson: ask,
    files: s.files,
    env: s.env,
    ...(s.signer ? { signer: s.signer } : {}),
    policy: async () => {
      const [{ PolicyGate }, { builtInPolicy }] = await Promise.all([import('../policy/gate.js'), import('../policy/default.js')]);
      return PolicyGate.load(out, { flag: s.flags.policy, env: s.env, paths: ctx.paths }, () => ctx.store(), approver, builtInPolicy);
    },
  });
  return ctx;
}

/** The document the command prints with --json for these fields (the same Output method, so the same bytes). */
export function printedDocument(fields: Record<string, unknown>): Record<string, unknown> {
  let text = '';
  const sink = { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream;
  new Output({ json: true, quiet: true, debug: false }, { stdout: sink, stderr: NOWHERE }).result(fields);
  return JSON.parse(text) as Record<string, unknown>;
}
