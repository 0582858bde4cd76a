// loopsign check-plan: definition (handler in check-plan.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface CheckPlanOptions {
  ask: string;
  response: string;
  wallet?: string;
  now?: string;
  templates?: string;
}

export function defineCheckPlan(program: Command, lazy: Lazy): void {
  program
    .command('check-plan')
    .description(
      'check a service answer obtained elsewhere (ask plan, x402 request or follow-up, bonus confirmation, rating prepare) against your ask with the signing guards; offline, no keystore',
    )
    .requiredOption('--ask <ask.json>', 'your ask file or the ask body that was sent (for a rating prepare: its arguments)')
    .requiredOption('--response <answer.json>', "the service's JSON answer")
    .option('--wallet <address>', 'the wallet that would sign (default: walletAddress in the ask)')
    .option('--now <unix-seconds>', 'the clock for authorization validity and seed translation (default: now)')
    .option('--templates <file>', "the service's templates answer, to recompute result-spec hashes from (default: the profile's table)")
    .addHelpText(
      'after',
      examples([
        'loopsign check-plan --ask ask.json --response plan.json --wallet 0x…',
        'loopsign --json check-plan --ask rate-args.json --response prepared.json --chain-id 8453',
      ]) + '\nExit codes: 0 every check passed, 5 refused (each failed check named), 2 unusable input. No network, no keystore.\n',
    )
    .action(
      lazy(
        () => import('./check-plan.js'),
        (m) => m.checkPlan,
      ),
    );
}
