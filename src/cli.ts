// The commander program. Command modules are imported only when their command runs, so `--help` and
// `--version` load no viem, tlock-js or undici (bench/ measures this).
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { Output } from './output.js';
import { createContext, type Context } from './context.js';
import { ExitCode, UsageError } from './errors.js';
import type { GlobalFlags } from './config.js';

export type Handler = (ctx: Context, options: Record<string, unknown>, args: unknown[]) => Promise<void>;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

export function buildProgram(out: Output): Command {
  const program = new Command('loopsign');

  // Each action builds its context from the globals, loads its module, and runs.
  const lazy =
    <M>(load: () => Promise<M>, pick: (m: M) => Handler) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const flags = cmd.optsWithGlobals() as GlobalFlags;
      const handler = pick(await load());
      // Parents' options included: `rate commit` and `rate status` take --content-id … from `rate`.
      await handler(createContext(flags, out), cmd.optsWithGlobals(), args.slice(0, -2));
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

  const wallet = program.command('wallet').description('create, import, show and back up the encrypted local wallet');
  wallet
    .command('new')
    .description('create a new key and write it as an encrypted v3 keystore')
    .option('--force', 'replace an existing keystore')
    .addHelpText('after', examples(['LOOPSIGN_PASSWORD=... loopsign wallet new', 'loopsign wallet new --password-file pass.txt --keystore ./agent.json']))
    .action(lazy(() => import('./commands/wallet.js'), (m) => m.walletNew));
  wallet
    .command('import')
    .description('import a private key (from stdin or a file, never argv) or an existing keystore file')
    .addOption(new Option('--private-key-file <file>', 'read the private key from this file').conflicts('keystoreFile'))
    .option('--keystore-file <file>', 'import an existing v3 keystore (geth, cast, ethers); unlocked with the password, re-encrypted')
    .option('--force', 'replace an existing keystore')
    .addHelpText('after', examples(['printf %s "$KEY" | loopsign wallet import --password-file pass.txt', 'loopsign wallet import --keystore-file ~/.foundry/keystores/agent']))
    .action(lazy(() => import('./commands/wallet.js'), (m) => m.walletImport));
  wallet
    .command('address')
    .description('print the wallet address')
    .addHelpText('after', examples(['loopsign wallet address', 'loopsign --json wallet address']))
    .action(lazy(() => import('./commands/wallet.js'), (m) => m.walletAddress));
  wallet
    .command('export')
    .description('write a copy of the encrypted keystore (still encrypted) to a file')
    .requiredOption('--out <file>', 'where to write the copy')
    .option('--force', 'replace an existing file')
    .addHelpText('after', examples(['loopsign wallet export --out backup-keystore.json']))
    .action(lazy(() => import('./commands/wallet.js'), (m) => m.walletExport));
  wallet
    .command('balance')
    .description('show the ETH, USDC and LREP balances of the wallet on the configured chain')
    .option('--address <address>', 'show another address instead of the wallet (no unlock needed)')
    .addHelpText('after', examples(['loopsign wallet balance --chain-id 31337']))
    .action(lazy(() => import('./commands/wallet.js'), (m) => m.walletBalance));

  const config = program.command('config').description('show the resolved configuration');
  config
    .command('show')
    .description('print every setting with where it came from (flag, env, config file, default); secrets masked')
    .addHelpText('after', examples(['loopsign config show', 'loopsign --json --chain-id 31337 config show']))
    .action(lazy(() => import('./commands/config.js'), (m) => m.configShow));

  const lookupOptions = (cmd: Command) =>
    cmd
      .option('--operation-key <key>', 'the operation key (0x + 64 hex)')
      .option('--client-request-id <id>', 'the clientRequestId of the ask (with the configured chain and wallet)')
      .option('--wallet <address>', 'the asking wallet for --client-request-id (default: the keystore)')
      .option('--wait', 'poll until the round is ready, honouring pollAfterMs and Retry-After')
      .option('--timeout <seconds>', 'with --wait: give up (exit 7) after this long', '600');

  program
    .command('templates')
    .description('list the question templates the service offers')
    .addHelpText('after', examples(['loopsign templates', 'loopsign --json templates']))
    .action(lazy(() => import('./commands/lookups.js'), (m) => m.templates));
  program
    .command('quote')
    .description('price an ask without paying (walletAddress filled from the keystore when absent)')
    .requiredOption('--file <ask.json>', 'the ask file')
    .option('--payment-mode <mode>', 'wallet_calls or x402_authorization')
    .addHelpText('after', examples(['loopsign quote --file ask.json']))
    .action(lazy(() => import('./commands/lookups.js'), (m) => m.quote));
  program
    .command('ask')
    .description('ask humans and pay: check the returned plan, sign, execute, confirm, fund any bonus')
    .requiredOption('--file <ask.json>', 'the ask file (interface shape or live shape)')
    .option('--payment-mode <mode>', 'wallet_calls or x402_authorization (default: the file, else the service default)')
    .option('--dry-run', 'ask the service for a dry run: no payment, no transaction')
    .option('--no-confirm', 'execute the plan but do not confirm it with the service (run `loopsign confirm` later)')
    .option('--wait', 'follow the ask to a settled result')
    .option('--timeout <seconds>', 'with --wait: give up (exit 7) after this long', '1800')
    .option('--atomic', 'batch calls that may share a block through EIP-7702 (allows delegating this wallet to the pinned delegate)')
    .option('--details-file <file>', 'check question.detailsHash against the SHA-256 of this local file')
    .addHelpText(
      'after',
      examples(['loopsign ask --file ask.json --wait', 'loopsign --json ask --file ask.json --payment-mode x402_authorization', 'loopsign ask --file ask.json --atomic']) +
        '\nRunning the same ask again after an interruption resumes it: nothing mined is sent again and nothing is paid twice.\n',
    )
    .action(lazy(() => import('./commands/ask.js'), (m) => m.ask));
  program
    .command('confirm')
    .description('confirm transactions already sent (by default the ones the journal recorded)')
    .requiredOption('--operation-key <key>', 'the operation key')
    .option('--tx <hash...>', 'transaction hashes, in plan order')
    .option('--feedback-bonus', 'confirm the feedback bonus transactions instead')
    .addHelpText('after', examples(['loopsign confirm --operation-key 0x…', 'loopsign confirm --operation-key 0x… --feedback-bonus']))
    .action(lazy(() => import('./commands/lookups.js'), (m) => m.confirm));
  program
    .command('check-plan')
    .description('check a service answer obtained elsewhere (ask plan, x402 request or follow-up, bonus confirmation, rating prepare) against your ask with the signing guards; offline, no keystore')
    .requiredOption('--ask <ask.json>', 'your ask file or the ask body that was sent (for a rating prepare: its arguments)')
    .requiredOption('--response <answer.json>', "the service's JSON answer")
    .option('--wallet <address>', 'the wallet that would sign (default: walletAddress in the ask)')
    .option('--now <unix-seconds>', 'the clock for authorization validity and seed translation (default: now)')
    .option('--templates <file>', "the service's templates answer, to recompute result-spec hashes from (default: the profile's table)")
    .addHelpText(
      'after',
      examples(['loopsign check-plan --ask ask.json --response plan.json --wallet 0x…', 'loopsign --json check-plan --ask rate-args.json --response prepared.json --chain-id 8453']) +
        '\nExit codes: 0 every check passed, 5 refused (each failed check named), 2 unusable input. No network, no keystore.\n',
    )
    .action(lazy(() => import('./commands/check-plan.js'), (m) => m.checkPlan));
  lookupOptions(program.command('status').description('the status of an ask'))
    .addHelpText('after', examples(['loopsign status --operation-key 0x…', 'loopsign status --client-request-id my-ask-1 --wait --timeout 120']))
    .action(lazy(() => import('./commands/lookups.js'), (m) => m.status));
  lookupOptions(program.command('result').description('the result package of an ask (rater text stays marked as untrusted)'))
    .option('--content-id <id>', 'a question of the ask (bundles), or on its own: the result by content')
    .option('--require-final', 'exit 7 unless the result is final')
    .addHelpText('after', examples(['loopsign result --operation-key 0x…', 'loopsign result --content-id 42', 'loopsign --json result --client-request-id my-ask-1 --wait']))
    .action(lazy(() => import('./commands/lookups.js'), (m) => m.result));

  const vote = (cmd: Command) =>
    cmd
      .option('--content-id <id>', 'the question to rate')
      .option('--up', 'vote up')
      .option('--down', 'vote down')
      .option('--prediction <percent>', 'your prediction of the share of up votes, 1 … 99')
      .option('--stake <lrep>', 'LREP to stake, 1 … 10 (at most 6 decimals); 0 for an advisory vote')
      .option('--frontend <address>', 'frontend operator address for fee attribution');
  const rateCmd = vote(
    program
      .command('rate')
      .description('rate a question with an encrypted vote commit (direction, prediction and salt never leave this machine)'),
  )
    .option('--yes', 'accept the confidentiality terms of gated content (the wallet signs the terms message)')
    .option('--atomic', 'approve and commit in one EIP-7702 batch')
    .addHelpText('after', examples(['loopsign rate --content-id 42 --up --prediction 70 --stake 2', 'loopsign rate --content-id 42 --down --prediction 35 --stake 0', 'loopsign rate commit --offline --runtime runtime.json --voter 0x… --content-id 42 --up --prediction 70 --stake 2']))
    .action(lazy(() => import('./commands/rate.js'), (m) => m.rate));
  const voteOptionsNote = '\nAlso takes the vote options of `loopsign rate`: --content-id, --up/--down, --prediction, --stake, --frontend.\n';
  rateCmd
    .command('commit')
    .description('build commit parameters with no network at all (buildCommitVoteParams)')
    .option('--offline', 'required: build locally, send nothing')
    .option('--runtime <file>', "the rating context's runtime object (JSON)")
    .option('--voter <address>', 'the account that will call the voting engine')
    .option('--salt <hex>', '32-byte salt for reproducible output (default: random from the CSPRNG)')
    .addHelpText('after', voteOptionsNote + examples(['loopsign --json rate commit --offline --runtime runtime.json --voter 0x… --content-id 42 --up --prediction 70 --stake 2']))
    .action(lazy(() => import('./commands/rate.js'), (m) => m.rateCommit));
  rateCmd
    .command('status')
    .description('the rating status of your vote on a question (--content-id)')
    .addHelpText('after', examples(['loopsign rate status --content-id 42']))
    .action(lazy(() => import('./commands/rate.js'), (m) => m.rateStatus));
  rateCmd
    .command('reveal')
    .description("reveal your committed vote from the journal, if the round's keeper has not (--content-id)")
    .addHelpText('after', examples(['loopsign rate reveal --content-id 42']))
    .action(lazy(() => import('./commands/rate.js'), (m) => m.rateReveal));

  program
    .command('upload-image')
    .description('upload JPG, PNG or WEBP images (checked by content, at most 10 MB) and print their URLs for question.imageUrls')
    .argument('<files...>', 'image files')
    .option('--attachment-id <id>', 'reuse an attachment id (one file)')
    .addHelpText('after', examples(['loopsign upload-image screenshot.png', 'loopsign --json upload-image a.png b.jpg']))
    .action(lazy(() => import('./commands/images.js'), (m) => m.uploadImage));
  const handoffCmd = program
    .command('handoff')
    .description('create a browser handoff link for a human-controlled wallet (the token stays in the URL fragment)')
    .option('--file <ask.json>', 'the ask file')
    .option('--image <file...>', 'generated images to carry (at most 4)')
    .option('--ttl <duration>', 'how long the link lives: 30m (default), 90s, 1h (1 minute … 30 minutes)')
    .addHelpText('after', examples(['loopsign handoff --file ask.json --image mockup.png --ttl 30m', 'loopsign handoff status ahf_…']))
    .action(lazy(() => import('./commands/images.js'), (m) => async (ctx, o) => {
      if (typeof o.file !== 'string') throw new UsageError('usage', 'handoff needs --file ask.json');
      return m.handoff(ctx, o);
    }));
  handoffCmd
    .command('status')
    .description('read a handoff created here (token from the journal, sent in the x-rateloop-handoff-token header)')
    .argument('<id>', 'the handoff id, ahf_…')
    .action(lazy(() => import('./commands/images.js'), (m) => m.handoffStatus));
  const signCmd = program
    .command('sign-link')
    .description('create a browser signing intent and print its /agent/sign/… link')
    .option('--file <ask.json>', 'the ask file')
    .option('--ttl <duration>', 'how long the link lives (1 minute … 24 hours; default 30m)')
    .addHelpText('after', examples(['loopsign sign-link --file ask.json', 'loopsign sign-link status asi_…']))
    .action(lazy(() => import('./commands/images.js'), (m) => async (ctx, o) => {
      if (typeof o.file !== 'string') throw new UsageError('usage', 'sign-link needs --file ask.json');
      return m.signLink(ctx, o);
    }));
  signCmd
    .command('status')
    .description('read a signing intent created here')
    .argument('<id>', 'the signing intent id, asi_…')
    .action(lazy(() => import('./commands/images.js'), (m) => m.signLinkStatus));

  const trust = (cmd: Command) =>
    cmd
      .option('--public-key <pin>', 'the pinned key: an .spki.txt pin file or its base64url line')
      .option('--key-id <id>', 'the key id, ed25519:<24 hex> (required with --public-key)')
      .option('--trusted-keys <file>', 'a saved trusted-keys document instead of a single pin (current and retired keys)');
  trust(
    program
      .command('verify-evidence')
      .description('verify an evidence packet, audit chain or coverage export offline, against a pinned key')
      .argument('[packet]', 'the packet (or any evidence file; its kind is detected), - for stdin'),
  )
    .option('--audit <export>', 'verify an audit chain export')
    .option('--expected-head <digest>', 'with an audit chain: the head digest you expect (sha256:…)')
    .option('--coverage <export>', 'verify a coverage export digest')
    .addHelpText(
      'after',
      examples([
        'loopsign verify-evidence packet.json --public-key key.spki.txt --key-id ed25519:2d5798c16bafaed29bdbcca0',
        'loopsign verify-evidence packet.json --trusted-keys trusted-keys.json',
        'loopsign --json verify-evidence --audit rateloop-audit.json --expected-head sha256:…',
      ]) + '\nExit 0 valid, 8 did not verify, 2 unusable input. The key inside a packet is never trusted.\n',
    )
    .action(lazy(() => import('./commands/evidence.js'), (m) => m.verifyEvidence));
  const evidence = program.command('evidence').description('trusted keys, pins and evidence downloads');
  evidence
    .command('keys')
    .description('download the public trusted keys (no account needed)')
    .option('--out <file>', 'save the document (for --trusted-keys)')
    .addHelpText('after', examples(['loopsign evidence keys', 'loopsign evidence keys --out trusted-keys.json']))
    .action(lazy(() => import('./commands/evidence.js'), (m) => m.evidenceKeys));
  evidence
    .command('pin')
    .description('write one trusted key as an SPKI pin file')
    .requiredOption('--key-id <id>', 'ed25519:<24 hex>')
    .requiredOption('--out <file>', 'the pin file to write')
    .option('--trusted-keys <file>', 'take the key from a saved document instead of downloading')
    .addHelpText('after', examples(['loopsign evidence pin --key-id ed25519:2d5798c16bafaed29bdbcca0 --out key.spki.txt']))
    .action(lazy(() => import('./commands/evidence.js'), (m) => m.evidencePin));
  trust(
    evidence
      .command('fetch')
      .description('download a run packet, the audit chain or the coverage export (workspace API key in LOOPSIGN_API_KEY) and verify it')
      .argument('<what>', 'run, audit or coverage')
      .argument('[runId]', 'the run, for `run`')
      .requiredOption('--workspace <id>', 'the workspace id')
      .option('--from <iso>', 'coverage window start')
      .option('--to <iso>', 'coverage window end')
      .option('--expected-head <digest>', 'audit: the head digest you expect')
      .option('--out <file>', 'where to write it'),
  )
    .addHelpText('after', examples(['LOOPSIGN_API_KEY=… loopsign evidence fetch run run_123 --workspace ws_1 --trusted-keys trusted-keys.json', 'loopsign evidence fetch audit --workspace ws_1']))
    .action(lazy(() => import('./commands/evidence.js'), (m) => m.evidenceFetch));

  program
    .command('generate')
    .description('generate a draft with review (a draft is never approval); workspace API key in LOOPSIGN_API_KEY')
    .option('--workflow <key>', 'the workflow key')
    .option('--agent <id>', 'the connected API-key agent')
    .option('--message <role:text...>', 'messages, e.g. user:Summarise the release notes')
    .option('--max-output-tokens <n>', 'output token cap')
    .option('--client-request-id <id>', 'idempotency label, sent as the Idempotency-Key header')
    .option('--retry <client-request-id>', 'repeat a journaled request exactly (after review setup failed)')
    .addHelpText('after', examples(['loopsign generate --workflow release-notes --agent agt_1 --message "user:Summarise build 42" --max-output-tokens 400', 'loopsign generate --retry gen-1a2b3c4d']))
    .action(lazy(() => import('./commands/generate.js'), (m) => m.generate));
  program
    .command('review')
    .description('follow reviews')
    .command('wait')
    .description('wait for a review with its continuation cursor; only an approved review is success (else exit 7)')
    .argument('<opportunityId>', 'the review opportunity')
    .option('--timeout <seconds>', 'give up (exit 7, not approval) after this long', '600')
    .addHelpText('after', examples(['loopsign review wait opp_123 --timeout 300']))
    .action(lazy(() => import('./commands/generate.js'), (m) => m.reviewWait));

  program
    .command('sandbox')
    .description('run a local stand-in for the service (anvil chain, contracts, drand beacon, keeper) on 127.0.0.1')
    .option('--port <n>', 'port for the service (default: a free port)')
    .option('--state-dir <dir>', 'where the manifest and the dev wallet live (default under the XDG state dir)')
    .option('--auto-advance', 'make chain time jump ahead whenever a round only waits for time (rounds settle in seconds)')
    .option('--atomic-plans', 'mark ask and bonus plans requiresAtomicExecution: true')
    .addHelpText(
      'after',
      examples(['loopsign sandbox', 'loopsign --json sandbox --port 8787 --auto-advance']) +
        '\nTest controls (not part of the live service) are served under /__sandbox on the same port; see docs/sandbox.md.\n',
    )
    .action(lazy(() => import('./commands/sandbox.js'), (m) => m.sandbox));

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
