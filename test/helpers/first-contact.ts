// What test/first-contact.test.ts (in-process) and test/first-contact.cli.test.ts (the built binary) both use: the
// ask a new user writes first, and how the local parser refuses a body.
import { checkAskBody } from '../../src/ask/ask-body.js';
import { UsageError } from '../../src/errors.js';
import { TEST_ADDRESS } from './cli.js';

export const NOW = Math.floor(Date.now() / 1000);

export function askBody(extra: Record<string, unknown> = {}, question: Record<string, unknown> = {}) {
  return {
    chainId: 8453,
    clientRequestId: `first-contact-${process.pid}`,
    walletAddress: TEST_ADDRESS,
    maxPaymentAmount: '1500000',
    bounty: { amount: '1500000', asset: 'USDC', requiredVoters: '3' },
    roundConfig: { questionDurationSeconds: '1200', minVoters: '3', maxVoters: '100' },
    question: {
      title: 'Should this agent proceed?',
      contextUrl: 'https://example.com/context',
      categoryId: '1',
      tags: ['agent'],
      ...question,
    },
    ...extra,
  };
}

/** The refusal of a body by the local parser (as checkAskBody gives it), or undefined when it passes. */
export function refusal(body: unknown): UsageError | undefined {
  try {
    checkAskBody(body, 'ask.json', NOW);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
}
