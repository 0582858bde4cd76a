// loopsign budget grant | import | show | sweep: definitions (handlers in budget.ts). On-chain budgets (issue 38, docs/budget.md).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface BudgetGrantOptions {
  to: string;
  usdcPerDay: string;
  usdcPer30Days: string;
  lrepPerDay?: string;
  lrepPer30Days?: string;
  ethNow?: string;
  expires: string;
  out: string;
  yes?: boolean;
  force?: boolean;
}

export interface BudgetShowOptions {
  grant?: string;
}

export interface BudgetRevokeOptions {
  grant?: string;
  all?: boolean;
  yes?: boolean;
}

export interface BudgetSweepOptions {
  float?: string;
  yes?: boolean;
}

export function defineBudget(program: Command, lazy: Lazy): void {
  const budget = program
    .command('budget')
    .description("on-chain budgets: the owner grants an agent's address capped USDC pulls that the chain enforces");
  budget
    .command('grant')
    .description(
      "owner side: let the agent's address pull USDC (and LREP, with --lrep-per-day) from this wallet, capped per UTC day and per 30 days until an expiry (MetaMask delegation; sets this wallet's EIP-7702 delegate the first time)",
    )
    .requiredOption('--to <address>', "the agent's session address (`loopsign wallet address` where the agent runs)")
    .requiredOption('--usdc-per-day <amount>', 'at most this much USDC per UTC day (display units: 20 = 20 USDC)')
    .requiredOption('--usdc-per-30-days <amount>', 'at most this much USDC per 30 days from the first day')
    .option('--lrep-per-day <amount>', 'also let it pull LREP: at most this much per UTC day (display units; with --lrep-per-30-days)')
    .option('--lrep-per-30-days <amount>', 'at most this much LREP per 30 days (with --lrep-per-day)')
    .option('--eth-now <amount>', 'after signing, also send the agent this much ETH for gas (display units: 0.01; at most 1)')
    .requiredOption('--expires <duration>', 'the grant ends after this long: 90d, 12h, 30m (at most 5 years)')
    .requiredOption('--out <file>', 'where to write the signed grant (mode 0600) for the agent')
    .option('--yes', 'sign without the y/N question (read the plan first: `--json` prints it)')
    .option('--force', 'replace an existing --out file')
    .addHelpText(
      'after',
      examples([
        'loopsign budget grant --to 0xAgent… --usdc-per-day 10 --usdc-per-30-days 25 --expires 90d --out grant.json',
        'loopsign budget grant --to 0xAgent… --usdc-per-day 10 --usdc-per-30-days 25 --lrep-per-day 50 --lrep-per-30-days 500 --expires 90d --out grant.json',
        'loopsign --json budget grant --to 0xAgent… --usdc-per-day 20 --usdc-per-30-days 200 --expires 30d --out grant.json --yes',
      ]),
    )
    .action(
      lazy(
        () => import('./budget.js'),
        (m) => m.budgetGrant,
      ),
    );
  budget
    .command('import')
    .description(
      'agent side: check a grant file against this wallet, the chain and the pinned contracts (each refusal has its own code), then record it',
    )
    .argument('<grant.json>', 'the grant file the owner wrote with `budget grant`')
    .addHelpText('after', examples(['loopsign budget import grant.json', 'loopsign --json budget import grant.json']))
    .action(
      lazy(
        () => import('./budget.js'),
        (m) => m.budgetImport,
      ),
    );
  budget
    .command('show')
    .description('caps, used, available, next reset and expiry of the grants, read from the enforcers on chain')
    .option('--grant <file>', 'a grant file (default: every grant recorded in the state folder for this chain)')
    .addHelpText('after', examples(['loopsign budget show', 'loopsign --json budget show --grant grant.json']))
    .action(
      lazy(
        () => import('./budget.js'),
        (m) => m.budgetShow,
      ),
    );
  budget
    .command('revoke')
    .description(
      'owner side: stop a grant on chain (DelegationManager.disableDelegation) or every grant of this wallet (NonceEnforcer.incrementNonce): one transaction from this wallet',
    )
    .option('--grant <file|id>', 'the grant to revoke: its file, or its id (delegation hash) as `budget show` lists it')
    .option('--all', 'revoke every grant of this wallet, recorded here or not (grants signed later still work)')
    .option('--yes', 'send without the y/N question (read the plan first: `--json` prints it)')
    .addHelpText(
      'after',
      examples([
        'loopsign budget revoke --grant grant.json',
        'loopsign budget revoke --all',
        'loopsign --json budget revoke --grant 0x1a2b… --yes',
      ]),
    )
    .action(
      lazy(
        () => import('./budget-revoke.js'),
        (m) => m.budgetRevoke,
      ),
    );
  budget
    .command('sweep')
    .description(
      "agent side: send this wallet's USDC and LREP above --float back to the owner of its grant (one journaled transaction per token; what a pending ask still needs stays)",
    )
    .option('--float <amount>', 'keep this much of each token on this wallet (display units: 2 = 2 USDC and 2 LREP; default 0)')
    .option('--yes', 'send without the y/N question (read the plan first: `--json` without --yes prints it)')
    .addHelpText('after', examples(['loopsign budget sweep', 'loopsign --json budget sweep --float 2 --yes']))
    .action(
      lazy(
        () => import('./budget.js'),
        (m) => m.budgetSweep,
      ),
    );
}
