// loopsign ask: definition (handler in ask.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface AskOptions {
  file: string;
  paymentMode?: string;
  dryRun?: boolean;
  /** false with --no-confirm. */
  confirm: boolean;
  wait?: boolean;
  timeout: string;
  atomic?: boolean;
  detailsFile?: string;
  setAsideStale?: boolean;
  waitFinal?: boolean;
  acceptForeignNonces?: boolean;
}

export function defineAsk(program: Command, lazy: Lazy): void {
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
    .option(
      '--wait-final',
      "when a transaction's nonce was used by another, wait in place until that is final (about 20 min on Base) instead of stopping with exit 4",
    )
    .option('--details-file <file>', 'check question.detailsHash against the SHA-256 of this local file')
    .option(
      '--set-aside-stale',
      'set aside a journal of this ask written on another instance of the chain (a restarted sandbox) and start over',
    )
    .option(
      '--accept-foreign-nonces',
      "confirm, once, the wallet's transactions on chain that loopsign's database does not know (other software, or a restored database)",
    )
    .addHelpText(
      'after',
      examples([
        'loopsign ask --file ask.json --wait',
        'loopsign --json ask --file ask.json --payment-mode x402_authorization',
        'loopsign ask --file ask.json --atomic',
      ]) + '\nRunning the same ask again after an interruption resumes it: nothing mined is sent again and nothing is paid twice.\n',
    )
    .action(
      lazy(
        () => import('./ask.js'),
        (m) => m.ask,
      ),
    );
}
