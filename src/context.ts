// What every command handler receives: the output channel and the (lazily) resolved configuration.
// config.ts pulls in zod, so it is imported only when a command asks for its configuration.
import type { Output } from './output.js';
import type { GlobalFlags, ResolvedConfig } from './config.js';
import type { Approver, PolicyGate } from './policy/gate.js';
import type { Store } from './store/db.js';
import { ANY_FILE, type FileGate } from './files.js';

export interface Context {
  out: Output;
  flags: GlobalFlags;
  config(): Promise<ResolvedConfig>;
  /** The spending policy that applies to this run (loaded once, lazily). */
  policy(): Promise<PolicyGate>;
  /** loopsign's database (journals, spend ledgers, policy windows), opened once, lazily. */
  store(): Promise<Store>;
  /** Cancels the run's waits (an MCP request's signal); the CLI has none — Ctrl-C ends the process. */
  signal?: AbortSignal;
  /**
   * Puts a yes-or-no question to the person at the MCP host (elicitation), which the agent cannot answer; absent
   * in the CLI, which asks on its terminal, and under an MCP client that cannot elicit.
   */
  askPerson?: AskPerson;
  /** Which files this run may read for its caller (every file the user names, in the CLI; an MCP server's roots). */
  files: FileGate;
}

/** A question only the person may answer: a title and the whole text to decide on. */
export type AskPerson = (question: { title: string; message: string }) => Promise<boolean>;

export interface ContextOptions {
  flags: GlobalFlags;
  out: Output;
  /**
   * Asks a human to approve a spend above the policy's threshold: the MCP server passes one that uses elicitation;
   * the CLI asks on a terminal, and nowhere else.
   */
  approver?: Approver;
  signal?: AbortSignal;
  askPerson?: AskPerson;
  files?: FileGate;
}

export function createContext({ flags, out, approver, signal, askPerson, files = ANY_FILE }: ContextOptions): Context {
  let resolved: Promise<ResolvedConfig> | undefined;
  let gate: Promise<PolicyGate> | undefined;
  let store: Promise<Store> | undefined;
  const openStore = () => (store ??= import('./store/open.js').then((m) => m.openStateStore(out)));
  return {
    out,
    flags,
    signal,
    askPerson,
    files,
    config: () => (resolved ??= import('./config.js').then((m) => m.resolveConfig(flags))),
    policy: () =>
      (gate ??= Promise.all([import('./policy/gate.js'), import('./policy/prompt.js')]).then(([g, p]) => g.PolicyGate.load(out, flags.policy, openStore, approver ?? p.terminalApprover(out)))),
    store: openStore,
  };
}
