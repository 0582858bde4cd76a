// Rating: `loopsign rate` and `loopsign rate commit --offline` — runRate (src/rate/flow.ts) and offlineCommit
// (src/rate/offline-commit.ts) with their checked request types; both commands print what these return.
import * as z from 'zod';
import type { RateOptions } from '../../rate/flow.js';
import type { OfflineOptions } from '../../rate/offline-commit.js';
import { tool } from '../call.js';
import { address, contentId, decimal, direction, document, filePath, pendingFields, replyWithinSeconds, text } from '../schemas.js';

const vote = {
  contentId,
  direction,
  prediction: decimal('your prediction of the share of up votes, in percent, 1 … 99'),
  stake: decimal('LREP to stake, 1 … 10 (at most 6 decimals); 0 for an advisory vote'),
  frontend: address.optional().describe('frontend operator address for fee attribution'),
};

export const ratingTools = [
  tool({
    name: 'loopsign_rate',
    title: 'Rate a question',
    description:
      'Rate a question with an encrypted vote commit, staking LREP within the spending policy (0: advisory); direction, prediction and salt stay here. Gated content: only the person accepts its terms, through the host (elicitation).',
    input: {
      ...vote,
      atomic: z.boolean().optional().describe('approve and commit in one EIP-7702 batch'),
      replyWithinSeconds,
    },
    output: document({
      // Optional: a pending answer carries none of these (its `known` names the question).
      contentId: z.string().optional(),
      roundId: z.string().optional(),
      commitHash: z.string().optional(),
      targetRound: z.union([z.string(), z.number()]).optional(),
      revealableAt: z.string().optional(),
      stakeWei: z.string().optional(),
      advisory: z.boolean().optional(),
      transactionHashes: z.array(z.string()).optional(),
      resumed: z.boolean().optional(),
      operation: z.string().optional().describe("the operation in loopsign's database whose journal keeps direction, prediction and salt"),
      ...pendingFields,
    }),
    run: async (ctx, i) => {
      const { runRate } = await import('../../rate/flow.js');
      const request: RateOptions = {
        contentId: i.contentId,
        isUp: i.direction === 'up',
        prediction: text(i.prediction),
        stake: text(i.stake),
        frontend: i.frontend,
        // Never the agent's: the terms are the person's to accept (context.askPerson), not a tool argument.
        acceptTerms: false,
        atomic: i.atomic === true,
      };
      return runRate(ctx, request);
    },
    job: {
      known: async (ctx, i) => {
        const [{ latestVote }, { readOperation }] = await Promise.all([import('../../rate/flow.js'), import('../../store/operation.js')]);
        const store = await ctx.store();
        const id = latestVote(store, (await ctx.chainSettings()).chain.chainId, (await ctx.wallet()).address.toLowerCase(), i.contentId);
        const op = readOperation(store, 'rate', id);
        return {
          contentId: i.contentId,
          operation: id,
          step: op?.step ?? 'not started',
          transactions: (op?.txs ?? []).map((t) => ({ hash: t.hash, stage: t.stage, status: t.status })),
        };
      },
    },
  }),
  tool({
    name: 'loopsign_rate_commit',
    title: 'Build a vote commit offline',
    description: "Build commitVote parameters from a rating context's runtime object with no network at all: nothing is sent or signed.",
    input: {
      ...vote,
      runtime: filePath("the rating context's runtime object (JSON)"),
      voter: address.describe('the account that will call the voting engine'),
      salt: z
        .string()
        .regex(/^0x[0-9a-fA-F]{64}$/)
        .optional()
        .describe('32-byte salt for reproducible output (default: random)'),
    },
    output: document({
      roundId: z.string(),
      targetRound: z.string(),
      commitHash: z.string(),
      ciphertext: z.string(),
      stakeWei: z.string(),
      frontend: z.string(),
    }),
    run: async (ctx, i) => {
      const { offlineCommit } = await import('../../rate/offline-commit.js');
      const request: OfflineOptions = {
        runtime: await ctx.files.check(i.runtime, 'the runtime file'),
        voter: i.voter,
        contentId: i.contentId,
        isUp: i.direction === 'up',
        prediction: text(i.prediction),
        stake: text(i.stake),
        salt: i.salt,
        frontend: i.frontend,
      };
      return offlineCommit(ctx, request);
    },
  }),
];
