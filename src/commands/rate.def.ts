// loopsign rate | rate commit --offline | rate status | rate reveal: definitions (handlers in rate.ts).
import type { Command } from 'commander';
import { examples, voteOptions, type Lazy, type VoteOptions } from './define.js';

export interface RateOptions extends VoteOptions {
  yes?: boolean;
  atomic?: boolean;
  newRound?: boolean;
  setAsideStale?: boolean;
  waitFinal?: boolean;
  acceptForeignNonces?: boolean;
}

/** `rate commit` reads the vote options from `rate`. */
export interface RateCommitOptions extends VoteOptions {
  offline?: boolean;
  runtime?: string;
  voter?: string;
  salt?: string;
}

/** `rate status` and `rate reveal` read --content-id from `rate`. */
export type RateLookupOptions = Pick<VoteOptions, 'contentId'>;

export function defineRate(program: Command, lazy: Lazy): void {
  const rateCmd = voteOptions(
    program
      .command('rate')
      .description('rate a question with an encrypted vote commit (direction, prediction and salt never leave this machine)'),
  )
    .option('--yes', 'accept the confidentiality terms of gated content (the wallet signs the terms message)')
    .option('--atomic', 'approve and commit in one EIP-7702 batch')
    .option(
      '--wait-final',
      "when a transaction's nonce was used by another, wait in place until that is final instead of stopping with exit 4",
    )
    .option('--new-round', 'vote again on a question this wallet voted on in an earlier round (a new vote; the earlier one is kept)')
    .option(
      '--set-aside-stale',
      'set aside a journal of this vote written on another instance of the chain (a restarted sandbox) and start over',
    )
    .option(
      '--accept-foreign-nonces',
      "confirm, once, the wallet's transactions on chain that loopsign's database does not know (other software, or a restored database)",
    )
    .addHelpText(
      'after',
      examples([
        'loopsign rate --content-id 42 --up --prediction 70 --stake 2',
        'loopsign rate --content-id 42 --down --prediction 35 --stake 0',
        'loopsign rate commit --offline --runtime runtime.json --voter 0x… --content-id 42 --up --prediction 70 --stake 2',
      ]),
    )
    .action(
      lazy(
        () => import('./rate.js'),
        (m) => m.rate,
      ),
    );
  const voteOptionsNote =
    '\nAlso takes the vote options of `loopsign rate`: --content-id, --up/--down, --prediction, --stake, --frontend.\n';
  rateCmd
    .command('commit')
    .description('build commit parameters with no network at all (buildCommitVoteParams)')
    .option('--offline', 'required: build locally, send nothing')
    .option('--runtime <file>', "the rating context's runtime object (JSON)")
    .option('--voter <address>', 'the account that will call the voting engine')
    .option('--salt <hex>', '32-byte salt for reproducible output (default: random from the CSPRNG)')
    .addHelpText(
      'after',
      voteOptionsNote +
        examples([
          'loopsign --json rate commit --offline --runtime runtime.json --voter 0x… --content-id 42 --up --prediction 70 --stake 2',
        ]),
    )
    .action(
      lazy(
        () => import('./rate.js'),
        (m) => m.rateCommit,
      ),
    );
  rateCmd
    .command('status')
    .description('the rating status of your vote on a question (--content-id)')
    .addHelpText('after', examples(['loopsign rate status --content-id 42']))
    .action(
      lazy(
        () => import('./rate.js'),
        (m) => m.rateStatus,
      ),
    );
  rateCmd
    .command('reveal')
    .description("reveal your committed vote from the journal, if the round's keeper has not (--content-id)")
    .addHelpText('after', examples(['loopsign rate reveal --content-id 42']))
    .action(
      lazy(
        () => import('./rate.js'),
        (m) => m.rateReveal,
      ),
    );
}
