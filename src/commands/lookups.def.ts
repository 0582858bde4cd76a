// loopsign templates | quote | confirm | status | result: definitions (handlers in lookups.ts).
import type { Command } from 'commander';
import { examples, lookupOptions, type Lazy, type LookupOptions } from './define.js';

export interface QuoteOptions {
  file: string;
  paymentMode?: string;
}

export interface ConfirmOptions {
  operationKey: string;
  tx?: string[];
  feedbackBonus?: boolean;
}

export type StatusOptions = LookupOptions;

export interface ResultOptions extends LookupOptions {
  contentId?: string;
  requireFinal?: boolean;
}

export function defineTemplates(program: Command, lazy: Lazy): void {
  program
    .command('templates')
    .description('list the question templates the service offers')
    .addHelpText('after', examples(['loopsign templates', 'loopsign --json templates']))
    .action(
      lazy(
        () => import('./lookups.js'),
        (m) => m.templates,
      ),
    );
}

export function defineQuote(program: Command, lazy: Lazy): void {
  program
    .command('quote')
    .description('price an ask without paying (walletAddress filled from the keystore when absent)')
    .requiredOption('--file <ask.json>', 'the ask file')
    .option('--payment-mode <mode>', 'wallet_calls or x402_authorization')
    .addHelpText('after', examples(['loopsign quote --file ask.json']))
    .action(
      lazy(
        () => import('./lookups.js'),
        (m) => m.quote,
      ),
    );
}

export function defineConfirm(program: Command, lazy: Lazy): void {
  program
    .command('confirm')
    .description('confirm transactions already sent (by default the ones the journal recorded)')
    .requiredOption('--operation-key <key>', 'the operation key')
    .option('--tx <hash...>', 'transaction hashes, in plan order')
    .option('--feedback-bonus', 'confirm the feedback bonus transactions instead')
    .addHelpText('after', examples(['loopsign confirm --operation-key 0x…', 'loopsign confirm --operation-key 0x… --feedback-bonus']))
    .action(
      lazy(
        () => import('./lookups.js'),
        (m) => m.confirm,
      ),
    );
}

export function defineStatus(program: Command, lazy: Lazy): void {
  lookupOptions(program.command('status').description('the status of an ask'))
    .addHelpText(
      'after',
      examples(['loopsign status --operation-key 0x…', 'loopsign status --client-request-id my-ask-1 --wait --timeout 120']) +
        "\nEach transaction of the ask in this database is shown with its state: open, included (block, confirmations), final\n(at or below the chain's finalized block), reverted, void, taken, cancelled, or unknown (a failed read, never final).\n",
    )
    .action(
      lazy(
        () => import('./lookups.js'),
        (m) => m.status,
      ),
    );
}

export function defineResult(program: Command, lazy: Lazy): void {
  lookupOptions(program.command('result').description('the result package of an ask (rater text stays marked as untrusted)'))
    .option('--content-id <id>', 'a question of the ask (bundles), or on its own: the result by content')
    .option('--require-final', 'exit 7 unless the result is final')
    .addHelpText(
      'after',
      examples([
        'loopsign result --operation-key 0x…',
        'loopsign result --content-id 42',
        'loopsign --json result --client-request-id my-ask-1 --wait',
      ]),
    )
    .action(
      lazy(
        () => import('./lookups.js'),
        (m) => m.result,
      ),
    );
}
