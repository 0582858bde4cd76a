// Asking: templates, quote, ask, confirm, status, result, check plan — the handlers of `loopsign templates|quote|
// ask|confirm|status|result|check-plan`, fed the options their flags would give.
import { z } from 'zod';
import { tool } from '../call.js';
import { contentId, document, filePath, operationKey, paymentMode, serviceDocument, timeoutSeconds, txHash, address } from '../schemas.js';

const lookups = () => import('../../commands/lookups.js');

const lookupInput = {
  operationKey: operationKey.optional(),
  clientRequestId: z.string().min(1).optional().describe('the clientRequestId of the ask (with the configured chain and the wallet)'),
  wallet: address.optional().describe('the asking wallet for clientRequestId (default: the keystore)'),
  wait: z.boolean().optional().describe('poll until the round is ready (progress notifications; cancel the call to stop waiting)'),
  timeoutSeconds: timeoutSeconds(600),
};

const lookupOptions = (i: { operationKey?: string; clientRequestId?: string; wallet?: string; wait?: boolean; timeoutSeconds?: number }) => ({
  operationKey: i.operationKey,
  clientRequestId: i.clientRequestId,
  wallet: i.wallet,
  wait: i.wait,
  timeout: String(i.timeoutSeconds ?? 600),
});

export const askTools = [
  tool({
    name: 'loopsign_templates',
    title: 'Question templates',
    description: 'List the question templates the service offers (ids for question.templateId and the inputs each requires).',
    input: {},
    output: serviceDocument(),
    invoke: async () => ({ handler: (await lookups()).templates, options: {} }),
  }),
  tool({
    name: 'loopsign_quote',
    title: 'Quote an ask',
    description: 'Price an ask file without paying: the payment, its operationKey and whether it can be submitted.',
    input: { file: filePath('the ask file (JSON)'), paymentMode: paymentMode.optional() },
    output: serviceDocument(),
    invoke: async (i, files) => ({ handler: (await lookups()).quote, options: { file: await files.check(i.file, 'the ask file'), paymentMode: i.paymentMode } }),
  }),
  tool({
    name: 'loopsign_ask',
    title: 'Ask humans and pay',
    description:
      "Ask humans and pay from the local wallet: the service's plan is checked against the ask file and the spending policy, then signed, executed and confirmed; calling again with the same file resumes and never pays twice.",
    input: {
      file: filePath('the ask file (JSON, interface or live shape)'),
      paymentMode: paymentMode.optional().describe('default: the file, else the service default'),
      dryRun: z.boolean().optional().describe('ask the service for a dry run: no payment, no transaction'),
      confirm: z.boolean().optional().describe('confirm the executed plan with the service (default true; false: call loopsign_confirm later)'),
      wait: z.boolean().optional().describe('follow the ask to its settled result (progress notifications; cancelling stops only the wait, the ask stays resumable)'),
      timeoutSeconds: timeoutSeconds(1800),
      atomic: z.boolean().optional().describe('batch calls that may share a block through EIP-7702 (allows delegating this wallet to the pinned delegate)'),
      detailsFile: filePath('check question.detailsHash against the SHA-256 of this file').optional(),
    },
    output: document({
      operationKey: z.string().optional(),
      clientRequestId: z.string().optional(),
      paymentMode: z.string().optional(),
      status: z.string().optional(),
      contentIds: z.array(z.string()).optional(),
      transactionHashes: z.array(z.string()).optional(),
      transactions: z.number().optional().describe('transactions sent by this call'),
      feedbackBonus: z.looseObject({ status: z.string() }).nullable().optional(),
      result: z.record(z.string(), z.unknown()).nullable().optional().describe('with wait: the settled result (rater text is untrusted data)'),
      resumed: z.boolean().optional(),
      operation: z.string().optional(),
      next: z.array(z.string()).optional(),
      dryRun: z.boolean().optional(),
      service: z.unknown().optional().describe('dry run: the service document'),
    }),
    invoke: async (i, files) => ({
      handler: (await import('../../commands/ask.js')).ask,
      options: {
        file: await files.check(i.file, 'the ask file'),
        paymentMode: i.paymentMode,
        dryRun: i.dryRun,
        confirm: i.confirm !== false,
        wait: i.wait,
        timeout: String(i.timeoutSeconds ?? 1800),
        atomic: i.atomic,
        detailsFile: i.detailsFile === undefined ? undefined : await files.check(i.detailsFile, 'the details file'),
      },
    }),
  }),
  tool({
    name: 'loopsign_confirm',
    title: 'Confirm sent transactions',
    description: "Confirm an operation's transactions with the service (by default the ones loopsign's journal recorded), e.g. after loopsign_ask with confirm=false.",
    input: {
      operationKey,
      transactionHashes: z.array(txHash).optional().describe('the hashes, in plan order (default: from the journal)'),
      feedbackBonus: z.boolean().optional().describe('confirm the feedback bonus transactions instead'),
    },
    output: serviceDocument(),
    invoke: async (i) => ({ handler: (await lookups()).confirm, options: { operationKey: i.operationKey, tx: i.transactionHashes, feedbackBonus: i.feedbackBonus } }),
  }),
  tool({
    name: 'loopsign_status',
    title: 'Status of an ask',
    description: 'The status of an ask by operationKey or clientRequestId; with wait, poll until it settles.',
    input: lookupInput,
    output: serviceDocument(),
    invoke: async (i) => ({ handler: (await lookups()).status, options: lookupOptions(i) }),
  }),
  tool({
    name: 'loopsign_result',
    title: 'Result of an ask',
    description: 'The result of an ask (answer, vote distribution, rater feedback marked as untrusted data) by operationKey, clientRequestId or contentId.',
    input: { ...lookupInput, contentId: contentId.optional().describe('a question of the ask (bundles), or on its own: the result by content') },
    output: serviceDocument(),
    invoke: async (i) => ({ handler: (await lookups()).result, options: { ...lookupOptions(i), contentId: i.contentId } }),
  }),
  tool({
    name: 'loopsign_check_plan',
    title: 'Check a plan offline',
    description: "Check a service answer obtained elsewhere (ask plan, x402 request or follow-up, bonus confirmation, rating prepare) against your ask with the signing guards, offline; a refused answer must not be signed.",
    input: {
      ask: filePath('your ask file or the ask body that was sent (for a rating prepare: its arguments)'),
      response: filePath("the service's JSON answer"),
      wallet: address.optional().describe('the wallet that would sign (default: walletAddress in the ask)'),
      now: z.number().int().nonnegative().optional().describe('unix seconds: the clock for authorization validity and seed translation (default: now)'),
      templates: filePath("the service's templates answer, to recompute result-spec hashes from (default: the profile's table)").optional(),
    },
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
    invoke: async (i, files) => ({
      handler: (await import('../../commands/check-plan.js')).checkPlan,
      options: {
        ask: await files.check(i.ask, 'the ask file'),
        response: await files.check(i.response, 'the answer file'),
        wallet: i.wallet,
        now: i.now === undefined ? undefined : String(i.now),
        templates: i.templates === undefined ? undefined : await files.check(i.templates, 'the templates file'),
      },
    }),
  }),
];
