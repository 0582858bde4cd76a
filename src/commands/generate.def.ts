// loopsign generate: definition (handler in generate.ts). Seed-only: the live service's source has no generation
// route; loopsign keeps the seed's POST /api/agent/v1/generations, which the sandbox serves.
import type { Command } from 'commander';
import { credentialOptions, examples, type CredentialOptions, type Lazy } from './define.js';

export interface GenerateOptions extends CredentialOptions {
  workflow?: string;
  agent?: string;
  message?: string[];
  maxOutputTokens?: string;
  clientRequestId?: string;
  retry?: string;
}

export function defineGenerate(program: Command, lazy: Lazy): void {
  credentialOptions(
    program
      .command('generate')
      .description(
        "SEED-ONLY: generate a draft with review on the seed's route, which the live service does not have (a draft is never approval)",
      )
      .option('--workflow <key>', 'the workflow key')
      .option('--agent <id>', 'the connected API-key agent')
      .option('--message <role:text...>', 'messages, e.g. user:Summarise the release notes')
      .option('--max-output-tokens <n>', 'output token cap')
      .option('--client-request-id <id>', 'idempotency label, sent as the Idempotency-Key header')
      .option('--retry <client-request-id>', 'repeat a journaled request exactly (after review setup failed)'),
  )
    .addHelpText(
      'after',
      examples([
        'loopsign generate --workflow release-notes --agent agt_1 --message "user:Summarise build 42" --max-output-tokens 400 --api-key-file ~/.rateloop-key',
        'loopsign generate --retry gen-1a2b3c4d --api-key-file ~/.rateloop-key',
      ]) +
        "\nSeed-only: POST /api/agent/v1/generations exists in the seed interface and the sandbox, not in the live service.\nThe draft's review is followed like any other: loopsign review wait <opportunityId>.\n",
    )
    .action(
      lazy(
        () => import('./generate.js'),
        (m) => m.generate,
      ),
    );
}
