// The commander program: global options, output and error handling, and the list of commands. Each command is
// defined beside its handler (src/commands/<name>.def.ts); handlers are imported only when their command runs, so
// `--help` and `--version` load no viem, tlock-js or undici (bench/ measures this). For speed where users wait:
// only the definition of the command that runs is imported, and the top-level help is answered by the bin from
// text rendered by this program at build time (scripts/help-text.mjs; test/cold-start.cli.test.ts compares them).
import { createRequire } from 'node:module';
import type { Command, ParseOptionsResult } from 'commander';
import { Output } from './output.js';
import { createContext } from './context.js';
import { ExitCode } from './errors.js';
import { installShutdown, shutdownSignal, stoppingBy } from './shutdown.js';
import { usageError } from './usage-errors.js';
import { packageVersion } from './version.js';
import type { GlobalFlags } from './config.js';
import { examples, type Define, type Handler, type Lazy } from './commands/define.js';

// Loaded with require: commander's ESM wrapper around the same CommonJS costs a cold start some 3 ms more.
const commander = createRequire(import.meta.url)('commander') as typeof import('commander');

// Every command, in the order --help lists them, with the definition that adds it (beside its handler;
// convention: src/commands/define.ts). The name is the command's own, so that running it imports only its module.
const COMMANDS: [name: string, load: () => Promise<Define>][] = [
  ['wallet', async () => (await import('./commands/wallet.def.js')).defineWallet],
  ['config', async () => (await import('./commands/config.def.js')).defineConfig],
  ['templates', async () => (await import('./commands/lookups.def.js')).defineTemplates],
  ['quote', async () => (await import('./commands/lookups.def.js')).defineQuote],
  ['ask', async () => (await import('./commands/ask.def.js')).defineAsk],
  ['check-plan', async () => (await import('./commands/check-plan.def.js')).defineCheckPlan],
  ['confirm', async () => (await import('./commands/lookups.def.js')).defineConfirm],
  ['status', async () => (await import('./commands/lookups.def.js')).defineStatus],
  ['result', async () => (await import('./commands/lookups.def.js')).defineResult],
  ['rate', async () => (await import('./commands/rate.def.js')).defineRate],
  ['upload-image', async () => (await import('./commands/images.def.js')).defineUploadImage],
  ['handoff', async () => (await import('./commands/images.def.js')).defineHandoff],
  ['sign-link', async () => (await import('./commands/images.def.js')).defineSignLink],
  ['verify-evidence', async () => (await import('./commands/evidence.def.js')).defineVerifyEvidence],
  ['evidence', async () => (await import('./commands/evidence.def.js')).defineEvidence],
  ['projects', async () => (await import('./commands/projects.def.js')).defineProjects],
  ['runs', async () => (await import('./commands/runs.def.js')).defineRuns],
  ['review', async () => (await import('./commands/review.def.js')).defineReview],
  ['generate', async () => (await import('./commands/generate.def.js')).defineGenerate],
  ['history', async () => (await import('./commands/history.def.js')).defineHistory],
  ['budget', async () => (await import('./commands/budget.def.js')).defineBudget],
  ['mcp', async () => (await import('./commands/mcp.def.js')).defineMcp],
  ['sandbox', async () => (await import('./commands/sandbox.def.js')).defineSandbox],
];

/** The names of the commands, in --help order (each defines a command of that name: test/cold-start.test.ts). */
export const COMMAND_NAMES = COMMANDS.map(([name]) => name);

/** Help is wrapped at 80 columns at most (narrower on a narrower terminal), so the bin's stored text is the same. */
export const HELP_WIDTH = 80;
const helpWidth = (stream: NodeJS.WriteStream): number => Math.min(stream.isTTY ? stream.columns : HELP_WIDTH, HELP_WIDTH);

/** The word naming the command to run: the first argument that is neither an option nor a global option's value. */
/**
 * Commander checks a command's required options before its unknown ones, so `ask --fille x` said "required option
 * --file not specified" and never suggested --file. Commands made by this class (and their subcommands) report the
 * first unknown option first, with commander's did-you-mean, as it would have right after. Only a leaf command with
 * an action is checked so (a group's unknown words belong to its subcommands), never when help was asked for.
 */
function unknownOptionsFirst(Base: typeof commander.Command): typeof commander.Command {
  type Internals = { _actionHandler?: unknown; _allowUnknownOption?: boolean; unknownOption(flag: string): never };
  class UnknownOptionsFirst extends Base {
    override createCommand(name?: string): Command {
      return new UnknownOptionsFirst(name);
    }
    private lastUnknown: string[] = [];
    override parseOptions(argv: string[]): ParseOptionsResult {
      const parsed = super.parseOptions(argv);
      this.lastUnknown = parsed.unknown;
      return parsed;
    }
    // Runs after the command's own options were parsed and after a help request was answered.
    _checkForMissingMandatoryOptions(): void {
      const self = this as unknown as Internals;
      const first = this.lastUnknown[0];
      if (this.commands.length === 0 && self._actionHandler && !self._allowUnknownOption && first?.startsWith('-'))
        self.unknownOption(first);
      (Base.prototype as unknown as { _checkForMissingMandatoryOptions(): void })._checkForMissingMandatoryOptions.call(this);
    }
  }
  return UnknownOptionsFirst;
}

function commandWord(program: Command, args: string[]): string | undefined {
  const takesValue = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (!arg.startsWith('-')) return arg;
    if (takesValue.has(arg)) i++;
  }
  return undefined;
}

/**
 * The program. Given the command line, it defines only the command that runs; without one (or for `help`, an
 * unknown command, anything unclear) it defines them all.
 */
export async function buildProgram(out: Output, argv?: string[]): Promise<Command> {
  const program = new (unknownOptionsFirst(commander.Command))('loopsign');

  // Each action builds its context from the globals, loads its module, and runs.
  const lazy: Lazy =
    <M, O>(load: () => Promise<M>, pick: (m: M) => Handler<O>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const flags = cmd.optsWithGlobals() as GlobalFlags;
      const handler = pick(await load());
      // From here on SIGINT/SIGTERM stop the command cleanly (src/shutdown.ts): its waits end through ctx.signal.
      installShutdown(out);
      // Parents' options included: `rate commit` and `rate status` take --content-id … from `rate`. The definition's
      // interface types them; commander's values are not checked against it.
      await handler(createContext({ flags, out, env: process.env, signal: shutdownSignal }), cmd.optsWithGlobals() as O, args.slice(0, -2));
    };

  // Set before any subcommand exists: commander copies these settings into each subcommand as it is created.
  program.exitOverride();
  // Commander's own error text is never printed: main() reports the error once, as every other error (one line, a
  // hint), in JSON under --json; commander's text could also echo an option's value (`--password=…`).
  program.configureOutput({
    outputError: () => undefined,
    getOutHelpWidth: () => helpWidth(process.stdout),
    getErrHelpWidth: () => helpWidth(process.stderr),
  });
  program
    .description(
      'Local signer for the RateLoop paid human-feedback service: quote, ask, confirm, rate and verify evidence from an encrypted local wallet. Every plan the service returns is checked before anything is signed.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--json', 'print exactly one JSON document on stdout; progress as JSON lines on stderr')
    .option('--base-url <url>', 'service origin (env LOOPSIGN_BASE_URL)')
    .option('--rpc-url <url>', 'JSON-RPC endpoint of the chain (env LOOPSIGN_RPC_URL)')
    .option('--chain-id <id>', '8453 production, 84532 staging, 31337 local sandbox (env LOOPSIGN_CHAIN_ID)')
    .option('--keystore <file>', 'encrypted keystore (env LOOPSIGN_KEYSTORE; default under the XDG data dir)')
    .option(
      '--signer <spec>',
      'where the key lives: keystore, aws:<key>, gcp:<key version>, rpc:<url> or ledger[:<path>] (env LOOPSIGN_SIGNER; see docs/wallet.md)',
    )
    .option('--from <address>', 'the address an external signer must hold, checked before anything is signed (env LOOPSIGN_FROM)')
    .option('--password-file <file>', 'read the keystore password from this file (env LOOPSIGN_PASSWORD_FILE)')
    .option('--password-env <name>', 'read the keystore password from this environment variable (default LOOPSIGN_PASSWORD)')
    .option('--allow-weak-kdf', 'unlock a keystore whose key derivation is weaker than common wallets write (see `wallet rekey`)')
    .option(
      '--policy <file>',
      "a spending policy enforced on top of the config folder's policy.json; adds limits, never lifts one (env LOOPSIGN_POLICY)",
    )
    .option('--quiet', 'no progress output')
    .option('--debug', 'show stack traces and details on errors')
    .addHelpText(
      'after',
      examples([
        'loopsign wallet new --password-file ~/.loopsign-pass',
        'loopsign wallet balance --chain-id 31337',
        'loopsign --json config show',
      ]) +
        '\nExit codes: 0 ok, 1 internal, 2 usage/invalid input, 3 service, 4 chain/RPC,\n5 refused by a safety check, 6 keystore/credential, 7 not ready yet, 8 evidence\nfailed verification, 130/143 stopped by SIGINT/SIGTERM (run it again to resume).\nSee docs/cli.md.\n',
    );

  const word = argv && commandWord(program, argv.slice(2));
  const only = COMMANDS.find(([name]) => name === word);
  const defines = await Promise.all((only ? [only] : COMMANDS).map(([, load]) => load()));
  for (const define of defines) define(program, lazy);
  return program;
}

/**
 * Ends the process with main's code once the command is over (a server command returns once it is closed): what
 * the command left behind must not hold the process open after its answer. A read of a stalled node that the
 * command stopped waiting for would, until the RPC timeout and its retries (a minute at the default 20 s). The
 * answer is flushed first (a pipe is asynchronous on macOS). A process told to stop exits from its shutdown handler
 * instead, once the cleanup hooks ran (the sandbox's stops anvil).
 */
export async function endProcess(code: number): Promise<void> {
  process.exitCode = code;
  if (stoppingBy() !== undefined) return;
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => (stream.destroyed || stream.writableEnded ? resolve() : stream.write('', () => resolve())));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  if (stoppingBy() === undefined) process.exit(code);
}

/** Runs the CLI and returns the exit code; never throws. */
export async function main(argv: string[]): Promise<number> {
  // A closed pipe (`loopsign --help | head`, `loopsign ask … 2>&1 | head -2`) is not an error, and never a reason to
  // stop: a paying command goes on to its end (and its exit code) whoever stopped reading, on stdout or stderr. What
  // it would have printed is lost; what it did is journaled (`loopsign history`).
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
      throw error;
    });
  const has = (flag: string): boolean => argv.slice(2).includes(flag);
  // The one place the process's environment is read (and the MCP server's, which this process runs): every run gets
  // it as a value through its Context (src/env.ts), by reference — nothing is copied out of it, secrets included.
  const env = process.env;
  const out = new Output({ json: has('--json'), quiet: has('--quiet'), debug: has('--debug') }, undefined, env);
  // Off unless asked for, and then their modules only: --help and --version load nothing new (bench/cold-start.mjs).
  if (env.LOOPSIGN_TIMINGS === '1') (await import('./timings.js')).enableTimings();
  if (env.LOOPSIGN_CRASH_AFTER) (await import('./store/crash-hook.js')).armCrashHook(env.LOOPSIGN_CRASH_AFTER);
  const program = await buildProgram(out, argv);
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return ExitCode.usage;
    }
    await program.parseAsync(argv);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof commander.CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
      // A command group run without a subcommand prints its help; that is a usage error, not success.
      if (error.code === 'commander.help') return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      return out.error(usageError(error));
    }
    // Stopped by a signal: the shutdown handler prints the one stop line and exits with its code.
    const stopping = stoppingBy();
    if (stopping !== undefined) return stopping === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
    return out.error(error);
  }
}
