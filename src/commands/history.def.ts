// loopsign history: definition (handler in history.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface HistoryOptions {
  since?: string;
  csv?: boolean;
  operation?: string;
  allChains?: boolean;
  owner?: string;
}

export function defineHistory(program: Command, lazy: Lazy): void {
  program
    .command('history')
    .description('what was spent, by day, chain, asset, operation and wallet: the numbers the spending policy counts')
    .option('--since <when>', 'from this date (2026-11-01, an ISO time) or this long ago (24h, 7d, 4w)')
    .option('--csv', 'print the rows as CSV instead of a table')
    .option('--all-chains', 'every chain, not only the configured one')
    .option('--owner <address>', 'only what session addresses with an imported grant from this owner spent, summed across them')
    .option('--operation <id>', "show one operation's journal: its steps, transactions and what each can pay")
    .addHelpText(
      'after',
      examples([
        'loopsign history --since 7d',
        'loopsign --json history --since 2026-11-01 --all-chains',
        'loopsign history --csv --since 30d > spend.csv',
        'loopsign history --owner 0xOwner… --since 30d',
        'loopsign history --operation ask-0123…',
      ]) +
        '\nAn amount counts from when it was signed until it is proven harmless (a reverted or dropped transaction, an\nauthorization that expired unused): what could leave the wallet, as the spending policy counts it.\nEach transaction of those operations is shown with its state: open, included, final, reverted, void, taken,\ncancelled, or unknown (a failed read of the chain, never final).\n',
    )
    .action(
      lazy(
        () => import('./history.js'),
        (m) => m.history,
      ),
    );
}
