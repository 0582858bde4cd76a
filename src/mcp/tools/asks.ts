// Asking: templates, quote, ask, confirm, status, result, check plan — the core calls of `loopsign templates|quote|
// ask|confirm|status|result|check-plan` (src/ask/flow.ts, src/ask/lookups.ts), with the documents those commands
// print (src/commands/ask.ts, lookups.ts, check-plan.ts). An ask is a file or inline (`ask`), checked alike.
import * as z from 'zod';
import type { Context } from '../../context.js';
import { readUserJson } from '../../fsutil.js';
import type { AskSource } from '../../ask/prepare.js';
import type { LookupOptions } from '../../ask/lookups.js';
import { tool, type Input } from '../call.js';
import {
  address,
  askArgument,
  contentId,
  document,
  filePath,
  inlineAsk,
  operationKey,
  paymentMode,
  pendingFields,
  replyWithinSeconds,
  serviceDocument,
  timeoutSeconds,
  transactionStates,
  txHash,
} from '../schemas.js';

const core = () => import('../../ask/lookups.js');
const documents = () => import('../../commands/lookups.js');

/** A path (read only through the file gate) or the JSON inline: the tool's `exactlyOne` made sure of one of them. */
async function pathOr<T>(ctx: Context, given: { path?: string; inline?: T }, what: string): Promise<{ file: string } | { inline: T }> {
  return given.inline !== undefined ? { inline: given.inline } : { file: await ctx.files.check(given.path!, what) };
}

/** The ask of a quote or an ask call: `file` or `ask`. */
const askSource = (ctx: Context, i: { file?: string; ask?: Record<string, unknown> }): Promise<AskSource> =>
  pathOr(ctx, { path: i.file, inline: i.ask }, 'the ask file');

const askInput = {
  file: filePath('the ask file (JSON, interface or live shape); give this or ask').optional(),
  ask: askArgument,
};

const lookupInput = {
  operationKey: operationKey.optional(),
  clientRequestId: z.string().min(1).optional().describe('the clientRequestId of the ask (with the configured chain and the wallet)'),
  wallet: address.optional().describe('the asking wallet for clientRequestId (default: the keystore)'),
  wait: z
    .boolean()
    .optional()
    .describe(
      'poll until the round is ready (progress notifications; the call answers pending within replyWithinSeconds and continueWith follows the wait)',
    ),
  timeoutSeconds: timeoutSeconds(600),
  replyWithinSeconds,
};

const lookup = (i: Input<typeof lookupInput> & { contentId?: string }): LookupOptions => ({
  operationKey: i.operationKey,
  clientRequestId: i.clientRequestId,
  contentId: i.contentId,
  wallet: i.wallet,
  wait: i.wait === true,
  timeoutSeconds: i.timeoutSeconds ?? 600,
});

/** A lookup is a job only when it waits. */
const waits = { when: (i: { wait?: boolean }) => i.wait === true };

/** What loopsign's journal of an ask says so far: its step, key and every transaction (what was signed and paid). */
async function askJournal(ctx: Context, source: AskSource): Promise<Record<string, unknown>> {
  const [{ loadAsk }, { operationId, readOperation }] = await Promise.all([
    import('../../ask/prepare.js'),
    import('../../store/operation.js'),
  ]);
  const config = await ctx.config();
  const { ask } = await loadAsk(source, config.chainId.value, undefined, config.profile.value, ctx.clock);
  // The wallet the run opened (one memo per run: nothing is unlocked twice).
  const wallet = (await ctx.wallet()).address.toLowerCase();
  const id = operationId('ask', [config.chainId.value, wallet, ask.clientRequestId]);
  const op = readOperation(await ctx.store(), 'ask', id);
  if (!op) return { clientRequestId: ask.clientRequestId, operation: id, step: 'not started', transactions: [] };
  return {
    clientRequestId: ask.clientRequestId,
    operation: op.id,
    step: op.step,
    operationKey: op.operationKey ?? null,
    transactions: op.txs.map((t) => ({ hash: t.hash, stage: t.stage, status: t.status })),
  };
}

export const askTools = [
  tool({
    name: 'loopsign_templates',
    title: 'Question templates',
    description: 'List the question templates the service offers (ids for question.templateId and the inputs each requires).',
    input: {},
    output: serviceDocument(),
    run: async (ctx) => (await documents()).templatesDocument(await (await core()).templates(ctx)),
  }),
  tool({
    name: 'loopsign_quote',
    title: 'Quote an ask',
    description:
      'Price an ask without paying (inline or a file): the payment, its operationKey, whether it can be submitted. The ask schema gives every field; amounts are atomic units (1 USDC = "1000000"); every problem is listed at once.',
    input: { ...askInput, paymentMode: paymentMode.optional() },
    exactlyOne: [['file', 'ask']],
    output: serviceDocument(),
    run: async (ctx, i) => (await documents()).quoteDocument(await (await core()).quote(ctx, await askSource(ctx, i), i.paymentMode)),
  }),
  tool({
    name: 'loopsign_ask',
    title: 'Ask humans and pay',
    description:
      'Ask humans and pay from the local wallet (inline or a file): the plan is checked against the ask and the policy, signed, executed, confirmed; the same ask again resumes, never pays twice. Amounts are atomic units (1 USDC = "1000000").',
    input: {
      ...askInput,
      paymentMode: paymentMode.optional().describe('default: the ask, else the service default'),
      dryRun: z.boolean().optional().describe('ask the service for a dry run: no payment, no transaction'),
      confirm: z
        .boolean()
        .optional()
        .describe('confirm the executed plan with the service (default true; false: call loopsign_confirm later)'),
      wait: z
        .boolean()
        .optional()
        .describe(
          'follow the ask to its settled result (progress notifications; an answer before then is pending, and continueWith follows it)',
        ),
      timeoutSeconds: timeoutSeconds(1800),
      atomic: z
        .boolean()
        .optional()
        .describe('batch calls that may share a block through EIP-7702 (allows delegating this wallet to the pinned delegate)'),
      detailsFile: filePath('check question.detailsHash against the SHA-256 of this file').optional(),
      replyWithinSeconds,
    },
    exactlyOne: [['file', 'ask']],
    output: document({
      operationKey: z.string().optional(),
      clientRequestId: z.string().optional(),
      paymentMode: z.string().optional(),
      status: z.string().optional(),
      contentIds: z.array(z.string()).optional(),
      transactionHashes: z.array(z.string()).optional(),
      transactions: z.number().optional().describe("the ask's transactions on chain, over every call for it"),
      sentThisRun: z.number().optional().describe('of those, the ones this call sent (0 when it found the ask already paid)'),
      budgetPulls: z
        .array(z.looseObject({ stage: z.string(), asset: z.string(), amount: z.string(), transactionHash: z.string() }))
        .optional()
        .describe("what the ask pulled from the owner's on-chain grant (atomic units), when this wallet imported one"),
      feedbackBonus: z.looseObject({ status: z.string() }).nullable().optional(),
      result: z
        .record(z.string(), z.unknown())
        .nullable()
        .optional()
        .describe('with wait: the settled result (rater text is untrusted data)'),
      resumed: z.boolean().optional(),
      operation: z.string().optional(),
      next: z.array(z.string()).optional(),
      dryRun: z.boolean().optional(),
      service: z.unknown().optional().describe('dry run: the service document'),
      ...pendingFields,
    }),
    run: async (ctx, i) => {
      const [{ runAsk, dryRunAsk }, { askDocument, askAmountsOf, dryRunDocument }] = await Promise.all([
        import('../../ask/flow.js'),
        import('../../commands/ask.js'),
      ]);
      const source = await askSource(ctx, i);
      const detailsFile = i.detailsFile === undefined ? undefined : await ctx.files.check(i.detailsFile, 'the details file');
      if (i.dryRun === true) return dryRunDocument(await dryRunAsk(ctx, { ...source, paymentMode: i.paymentMode, detailsFile }));
      const request = {
        ...source,
        paymentMode: i.paymentMode,
        confirm: i.confirm !== false,
        wait: i.wait === true,
        timeoutSeconds: i.timeoutSeconds ?? 1800,
        atomic: i.atomic === true,
        detailsFile,
      };
      return askDocument(await runAsk(ctx, request), await askAmountsOf(ctx, source));
    },
    job: { known: async (ctx, i) => askJournal(ctx, await askSource(ctx, i)) },
  }),
  tool({
    name: 'loopsign_confirm',
    title: 'Confirm sent transactions',
    description:
      "Confirm an operation's transactions with the service (by default the ones loopsign's journal recorded), e.g. after loopsign_ask with confirm=false.",
    input: {
      operationKey,
      transactionHashes: z.array(txHash).optional().describe('the hashes, in plan order (default: from the journal)'),
      feedbackBonus: z.boolean().optional().describe('confirm the feedback bonus transactions instead'),
    },
    output: serviceDocument(),
    run: async (ctx, i) =>
      (await documents()).confirmDocument(
        await (await core()).confirm(ctx, i.operationKey, i.transactionHashes ?? [], i.feedbackBonus === true),
      ),
  }),
  tool({
    name: 'loopsign_status',
    title: 'Status of an ask',
    description: 'The status of an ask by operationKey or clientRequestId; with wait, poll until it settles.',
    input: lookupInput,
    output: serviceDocument({ ...pendingFields, ...transactionStates }),
    run: async (ctx, i) => {
      const { statusOf, statusDocument } = await documents();
      const { s, states } = await statusOf(ctx, lookup(i));
      return statusDocument(s, states);
    },
    job: waits,
  }),
  tool({
    name: 'loopsign_result',
    title: 'Result of an ask',
    description:
      'The result of an ask (answer, vote distribution, rater feedback marked as untrusted data) by operationKey, clientRequestId or contentId.',
    input: {
      ...lookupInput,
      contentId: contentId.optional().describe('a question of the ask (bundles), or on its own: the result by content'),
    },
    output: serviceDocument(pendingFields),
    run: async (ctx, i) => (await documents()).resultDocument(await (await core()).result(ctx, lookup(i))),
    job: waits,
  }),
  tool({
    name: 'loopsign_check_plan',
    title: 'Check a plan offline',
    description:
      'Check a service answer obtained elsewhere (ask plan, x402 request or follow-up, bonus confirmation, rating prepare) against your ask with the signing guards, offline; a refused answer must not be signed.',
    input: {
      ask: inlineAsk
        .optional()
        .describe('your ask or the ask body that was sent (for a rating prepare: its arguments), as a JSON object; give this or askFile'),
      askFile: filePath('the same, as a file').optional(),
      response: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("the service's JSON answer, as a JSON object; give this or responseFile"),
      responseFile: filePath("the service's JSON answer, as a file").optional(),
      wallet: address.optional().describe('the wallet that would sign (default: walletAddress in the ask)'),
      now: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe('unix seconds: the clock for authorization validity and seed translation (default: now)'),
      templates: filePath("the service's templates answer, to recompute result-spec hashes from (default: the profile's table)").optional(),
    },
    exactlyOne: [
      ['askFile', 'ask'],
      ['responseFile', 'response'],
    ],
    output: document({
      passed: z.literal(true),
      kind: z.string(),
      wallet: z.string(),
      chainId: z.number(),
      operationKey: z.string().optional(),
      calls: z.number(),
      checks: z.array(z.looseObject({ name: z.string(), ok: z.boolean(), detail: z.string() })),
      needsChain: z.array(z.string()).describe('what only the chain can prove, not checked offline'),
      translations: z.array(z.unknown()),
    }),
    run: async (ctx, i) => {
      const [ask, response] = await Promise.all([
        pathOr(ctx, { path: i.askFile, inline: i.ask }, 'the ask file'),
        pathOr(ctx, { path: i.responseFile, inline: i.response }, 'the answer file'),
      ]);
      const json = async (source: { file: string } | { inline: unknown }, what: string) =>
        'file' in source ? readUserJson(source.file, what, 60 * 1024 * 1024) : structuredClone(source.inline);
      const { checkPlanDocument } = await import('../../commands/check-plan.js');
      const { doc } = await checkPlanDocument(ctx, {
        ask: await json(ask, 'ask file'),
        response: await json(response, 'answer file'),
        templates:
          i.templates === undefined
            ? undefined
            : await readUserJson(await ctx.files.check(i.templates, 'the templates file'), 'templates file'),
        wallet: i.wallet,
        now: i.now,
      });
      return doc;
    },
  }),
];
