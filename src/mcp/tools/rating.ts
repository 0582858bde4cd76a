// Rating: `loopsign rate` and `loopsign rate commit --offline`, fed the options their flags would give.
import { z } from 'zod';
import { tool } from '../call.js';
import { address, contentId, decimal, direction, document, filePath, text } from '../schemas.js';

const rate = () => import('../../commands/rate.js');

const vote = {
  contentId,
  direction,
  prediction: decimal('your prediction of the share of up votes, in percent, 1 … 99'),
  stake: decimal('LREP to stake, 1 … 10 (at most 6 decimals); 0 for an advisory vote'),
  frontend: address.optional().describe('frontend operator address for fee attribution'),
};

const voteOptions = (i: { contentId: string; direction: 'up' | 'down'; prediction: string | number; stake: string | number; frontend?: string }) => ({
  contentId: i.contentId,
  up: i.direction === 'up',
  down: i.direction === 'down',
  prediction: text(i.prediction),
  stake: text(i.stake),
  frontend: i.frontend,
});

export const ratingTools = [
  tool({
    name: 'loopsign_rate',
    title: 'Rate a question',
    description:
      'Rate a question with an encrypted vote commit, staking LREP within the spending policy (0: advisory); direction, prediction and salt stay here. Gated content: only the person accepts its terms, through the host (elicitation).',
    input: {
      ...vote,
      atomic: z.boolean().optional().describe('approve and commit in one EIP-7702 batch'),
    },
    output: document({
      contentId: z.string(),
      roundId: z.string().optional(),
      commitHash: z.string().optional(),
      targetRound: z.union([z.string(), z.number()]).optional(),
      revealableAt: z.string().optional(),
      stakeWei: z.string().optional(),
      advisory: z.boolean().optional(),
      transactionHashes: z.array(z.string()).optional(),
      resumed: z.boolean().optional(),
      operation: z.string().optional().describe("the operation in loopsign's database whose journal keeps direction, prediction and salt"),
    }),
    // Never `yes`: the terms are the person's to accept (context.askPerson), not the agent's.
    invoke: async (i) => ({ handler: (await rate()).rate, options: { ...voteOptions(i), yes: false, atomic: i.atomic } }),
  }),
  tool({
    name: 'loopsign_rate_commit',
    title: 'Build a vote commit offline',
    description: "Build commitVote parameters from a rating context's runtime object with no network at all: nothing is sent or signed.",
    input: {
      ...vote,
      runtime: filePath("the rating context's runtime object (JSON)"),
      voter: address.describe('the account that will call the voting engine'),
      salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional().describe('32-byte salt for reproducible output (default: random)'),
    },
    output: document({
      roundId: z.string(),
      targetRound: z.string(),
      commitHash: z.string(),
      ciphertext: z.string(),
      stakeWei: z.string(),
      frontend: z.string(),
    }),
    invoke: async (i, files) => ({ handler: (await rate()).rateCommit, options: { ...voteOptions(i), offline: true, runtime: await files.check(i.runtime, 'the runtime file'), voter: i.voter, salt: i.salt } }),
  }),
];
