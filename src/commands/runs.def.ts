// loopsign runs status: definition (handler in runs.ts).
import type { Command } from 'commander';
import { credentialOptions, examples, type CredentialOptions, type Lazy } from './define.js';

export interface RunsStatusOptions extends CredentialOptions {
  wait?: boolean;
  timeout: string;
}

export function defineRuns(program: Command, lazy: Lazy): void {
  const runs = program.command('runs').description('assurance runs of a project (workspace API key)');
  credentialOptions(
    runs
      .command('status')
      .description('the status of a run; --wait follows it to completed or cancelled')
      .argument('<runId>', 'hau_ + 32 or 40 hex (from `projects show`)')
      .option('--wait', 'poll until the run is completed or cancelled')
      .option('--timeout <seconds>', 'with --wait: give up (exit 7) after this long', '600'),
  )
    .addHelpText(
      'after',
      examples(['loopsign runs status hau_0123456789abcdef0123456789abcdef --wait --api-key-file ~/.rateloop-key']) +
        '\nA completed run prints the command that fetches and verifies its evidence packet (loopsign evidence fetch run …).\n',
    )
    .action(
      lazy(
        () => import('./runs.js'),
        (m) => m.runsStatus,
      ),
    );
}
