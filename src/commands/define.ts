// How a command is added (the convention, after Foundry's `cast`, which keeps each command's arguments with its code):
//
//   src/commands/<name>.def.ts  the definition: an interface of its parsed options (`<Command>Options`) and a
//                               `define<Command>(parent, lazy)` that declares names, options, defaults, help text and
//                               examples, and wires the action with `lazy(() => import('./<name>.js'), (m) => m.fn)`.
//   src/commands/<name>.ts      the handler: `fn(ctx, options: <Command>Options, args)`: options → one core call → render.
//   src/cli.ts                  registers the command's name with `define<Command>` in its list; the list's order is
//                               the order in --help. Running a command imports only its own definition module.
//
// `loopsign help` loads cli.ts, this module and every *.def.ts, so a definition module imports only commander's
// types and this module (itself only commander's types and ../errors.js), never viem, undici, tlock-js, zod or its
// handler: the handler is imported when its command runs. (The top-level `--help` is answered by the bin from
// text the program renders at build time: scripts/help-text.mjs.)
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';

/** A command's handler. `options` are the command's parsed options (global flags included, typed in the Context). */
export type Handler<O> = (ctx: Context, options: O, args: unknown[]) => Promise<void>;

/** A commander action that imports its handler's module only when the command runs (cli.ts supplies it). */
export type Lazy = <M, O>(load: () => Promise<M>, pick: (m: M) => Handler<O>) => (...args: unknown[]) => Promise<void>;

/** Adds one top-level command (with its subcommands) to the program. */
export type Define = (program: Command, lazy: Lazy) => void;

export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/**
 * `--file` for a command that has subcommands: a required option there would be required of `handoff status` too,
 * since commander checks the options of every parent, so it is checked here when the command itself runs.
 */
export function needsFile<O extends { file?: string }>(command: string, handler: Handler<O>): Handler<O> {
  return async (ctx, o, args) => {
    if (typeof o.file !== 'string') throw new UsageError('usage', `${command} needs --file ask.json`);
    return handler(ctx, o, args);
  };
}

/** Finding an ask: `status` and `result`. */
export interface LookupOptions {
  operationKey?: string;
  clientRequestId?: string;
  wallet?: string;
  wait?: boolean;
  timeout: string;
}

export const lookupOptions = (cmd: Command) =>
  cmd
    .option('--operation-key <key>', 'the operation key (0x + 64 hex)')
    .option('--client-request-id <id>', 'the clientRequestId of the ask (with the configured chain and wallet)')
    .option('--wallet <address>', 'the asking wallet for --client-request-id (default: the keystore)')
    .option('--wait', 'poll until the round is ready, honouring pollAfterMs and Retry-After')
    .option('--timeout <seconds>', 'with --wait: give up (exit 7) after this long', '600');

/** A vote: `rate` declares them, and its subcommands read them from it. */
export interface VoteOptions {
  contentId?: string;
  up?: boolean;
  down?: boolean;
  prediction?: string;
  stake?: string;
  frontend?: string;
}

export const voteOptions = (cmd: Command) =>
  cmd
    .option('--content-id <id>', 'the question to rate')
    .option('--up', 'vote up')
    .option('--down', 'vote down')
    .option('--prediction <percent>', 'your prediction of the share of up votes, 1 … 99')
    .option('--stake <lrep>', 'LREP to stake, 1 … 10 (at most 6 decimals); 0 for an advisory vote')
    .option('--frontend <address>', 'frontend operator address for fee attribution');

/** The key that evidence is verified against: `verify-evidence` and `evidence fetch`. */
export interface TrustOptions {
  publicKey?: string;
  keyId?: string;
  trustedKeys?: string;
}

export const trustOptions = (cmd: Command) =>
  cmd
    .option('--public-key <pin>', 'the pinned key: an .spki.txt pin file or its base64url line')
    .option('--key-id <id>', 'the key id, ed25519:<24 hex>; without it the id derived from the pin is expected')
    .option('--trusted-keys <file>', 'a saved trusted-keys document instead of a single pin (current and retired keys)');

/** The workspace credential (an `rlk_` API key or an `rlo_at_` agent token): from a file or a named variable, never argv. */
export interface CredentialOptions {
  apiKeyFile?: string;
  apiKeyEnv?: string;
}

export const credentialOptions = (cmd: Command) =>
  cmd
    .option('--api-key-file <file>', 'a file holding the workspace API key (rlk_…) or a connected agent token (rlo_at_…)')
    .option('--api-key-env <name>', 'the NAME of an environment variable holding it (the key never goes in argv)');
