// loopsign generate | review wait: definitions (handlers in generate.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface GenerateOptions {
  workflow?: string;
  agent?: string;
  message?: string[];
  maxOutputTokens?: string;
  clientRequestId?: string;
  retry?: string;
}

export interface ReviewWaitOptions {
  timeout: string;
}

export function defineGenerate(program: Command, lazy: Lazy): void {
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
    .action(lazy(() => import('./generate.js'), (m) => m.generate));
}

export function defineReview(program: Command, lazy: Lazy): void {
  program
    .command('review')
    .description('follow reviews')
    .command('wait')
    .description('wait for a review with its continuation cursor; only an approved review is success (else exit 7)')
    .argument('<opportunityId>', 'the review opportunity')
    .option('--timeout <seconds>', 'give up (exit 7, not approval) after this long', '600')
    .addHelpText('after', examples(['loopsign review wait opp_123 --timeout 300']))
    .action(lazy(() => import('./generate.js'), (m) => m.reviewWait));
}
