// The commander program: global options, output and error handling, and the list of commands. Each command is
// defined beside its handler (src/commands/<name>.def.ts); handlers are imported only when their command runs, so
// `--help` and `--version` load no viem, tlock-js or undici (bench/ measures this).
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { Output } from './output.js';
import { createContext } from './context.js';
import { ExitCode, UsageError } from './errors.js';
import type { GlobalFlags } from './config.js';
import { examples, type Define, type Handler, type Lazy } from './commands/define.js';
import { defineAsk } from './commands/ask.def.js';
import { defineCheckPlan } from './commands/check-plan.def.js';
import { defineConfig } from './commands/config.def.js';
import { defineEvidence, defineVerifyEvidence } from './commands/evidence.def.js';
import { defineGenerate, defineReview } from './commands/generate.def.js';
import { defineHandoff, defineSignLink, defineUploadImage } from './commands/images.def.js';
import { defineConfirm, defineQuote, defineResult, defineStatus, defineTemplates } from './commands/lookups.def.js';
import { defineRate } from './commands/rate.def.js';
import { defineSandbox } from './commands/sandbox.def.js';
import { defineWallet } from './commands/wallet.def.js';

// Every command, in the order --help lists them; each is defined beside its handler (convention: src/commands/define.ts).
const COMMANDS: Define[] = [
  defineWallet,
  defineConfig,
  defineTemplates,
  defineQuote,
  defineAsk,
  defineCheckPlan,
  defineConfirm,
  defineStatus,
  defineResult,
  defineRate,
  defineUploadImage,
  defineHandoff,
  defineSignLink,
  defineVerifyEvidence,
  defineEvidence,
  defineGenerate,
  defineReview,
  defineSandbox,
];

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(out: Output): Command {
  const program = new Command('loopsign');

  // Each action builds its context from the globals, loads its module, and runs.
  const lazy: Lazy =
    <M, O>(load: () => Promise<M>, pick: (m: M) => Handler<O>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const flags = cmd.optsWithGlobals() as GlobalFlags;
      const handler = pick(await load());
      // Parents' options included: `rate commit` and `rate status` take --content-id … from `rate`. The definition's
      // interface types them; commander's values are not checked against it.
      await handler(createContext(flags, out), cmd.optsWithGlobals() as O, args.slice(0, -2));
    };

  // Set before any subcommand exists: commander copies these settings into each subcommand as it is created.
  program.exitOverride();
  // Under --json, commander's own error text would be a second document: the error goes out as JSON instead.
  program.configureOutput({ outputError: (text, write) => (out.json ? undefined : write(text)) });
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
    .option('--password-file <file>', 'read the keystore password from this file (env LOOPSIGN_PASSWORD_FILE)')
    .option('--password-env <name>', 'read the keystore password from this environment variable (default LOOPSIGN_PASSWORD)')
    .option('--allow-weak-kdf', 'unlock a keystore whose key derivation is weaker than common wallets write (see `wallet rekey`)')
    .option('--policy <file>', 'a spending policy enforced on top of the config folder\'s policy.json; adds limits, never lifts one (env LOOPSIGN_POLICY)')
    .option('--quiet', 'no progress output')
    .option('--debug', 'show stack traces and details on errors')
    .showHelpAfterError(out.json ? false : '(run with --help for usage)')
    .addHelpText(
      'after',
      examples([
        'loopsign wallet new --password-file ~/.loopsign-pass',
        'loopsign wallet balance --chain-id 31337',
        'loopsign --json config show',
      ]) + '\nExit codes: 0 ok, 1 internal, 2 usage/invalid input, 3 service, 4 chain/RPC, 5 refused by a safety check,\n6 keystore/credential, 7 not ready yet, 8 evidence failed verification. See docs/cli.md.\n',
    );

  for (const define of COMMANDS) define(program, lazy);

  return program;
}

/** Runs the CLI and returns the exit code; never throws. */
export async function main(argv: string[]): Promise<number> {
  // A closed pipe (`loopsign --help | head`) is not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const has = (flag: string): boolean => argv.slice(2).includes(flag);
  const out = new Output({ json: has('--json'), quiet: has('--quiet'), debug: has('--debug') });
  const program = buildProgram(out);
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return ExitCode.usage;
    }
    await program.parseAsync(argv);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
      // A command group run without a subcommand prints its help; that is a usage error, not success.
      if (error.code === 'commander.help') return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
      const message = error.message.replace(/^error: /, '');
      return out.error(new UsageError(error.code.replace(/^commander\./, '').replace(/([A-Z])/g, '_$1').toLowerCase(), message, {
        hint: 'run the command with --help for its usage',
      }));
    }
    return out.error(error);
  }
}
