// The ask-side rateloop_ tools (service-api.md §8.4); each runs the same function as its HTTP twin.
import type { AskService } from './asks.js';
import type { McpTool } from './mcp.js';
import { invalidArguments } from './envelope.js';

const obj = (properties: Record<string, unknown> = {}, required: string[] = []) => ({ type: 'object', properties, required });

export function askTools(asks: AskService): McpTool[] {
  const tool = (name: string, title: string, description: string, inputSchema: Record<string, unknown>, handler: McpTool['handler'], tier: McpTool['tier'] = 'primary'): McpTool => ({
    name,
    title,
    description,
    inputSchema,
    tier,
    workflow: 'ask',
    handler,
  });
  const key = (args: Record<string, unknown>) => {
    if (typeof args.operationKey !== 'string') throw invalidArguments('operationKey is required.');
    return args.operationKey;
  };
  return [
    tool('rateloop_list_result_templates', 'List result templates', 'Question templates with their result specs.', obj(), async () => asks.templates(), 'advanced'),
    tool('rateloop_quote_question', 'Quote a question', 'Price an ask without reserving anything.', obj({ clientRequestId: { type: 'string' }, bounty: { type: 'object' } }, ['clientRequestId', 'bounty']), async (a) => asks.quote(a)),
    tool('rateloop_ask_humans', 'Ask humans', 'Prepare an ask: returns a transaction plan or an EIP-3009 authorization request.', obj({ clientRequestId: { type: 'string' }, bounty: { type: 'object' }, walletAddress: { type: 'string' } }, ['clientRequestId', 'bounty']), async (a) => asks.ask(a)),
    tool('rateloop_confirm_ask_transactions', 'Confirm ask transactions', 'Confirm the hashes of the executed ask plan.', obj({ operationKey: { type: 'string' }, transactionHashes: { type: 'array', items: { type: 'string' } } }, ['operationKey', 'transactionHashes']), async (a) => asks.confirm(key(a), a)),
    tool('rateloop_confirm_feedback_bonus_transactions', 'Confirm feedback bonus transactions', 'Confirm the hashes of the executed bonus plan.', obj({ operationKey: { type: 'string' }, transactionHashes: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 8 } }, ['operationKey', 'transactionHashes']), async (a) => {
      if (Array.isArray(a.transactionHashes) && a.transactionHashes.length > 8) throw invalidArguments('transactionHashes may contain at most 8 hashes.');
      return asks.confirmBonus(key(a), a);
    }),
    tool('rateloop_get_question_status', 'Question status', 'Status of an ask by operationKey or by chainId, clientRequestId and walletAddress.', obj({ operationKey: { type: 'string' }, chainId: { type: 'number' }, clientRequestId: { type: 'string' }, walletAddress: { type: 'string' } }), async (a) => {
      if (typeof a.operationKey === 'string') return asks.status(a.operationKey);
      const op = asks.lookup({ chainId: a.chainId === undefined ? null : String(a.chainId), clientRequestId: a.clientRequestId as string, walletAddress: a.walletAddress as string });
      return op ? asks.statusWithHints(op) : asks.notFoundBody();
    }),
    tool('rateloop_get_result', 'Get result', 'The result package of an ask.', obj({ operationKey: { type: 'string' }, contentId: { type: 'string' } }), async (a) => {
      const contentId = a.contentId === undefined ? null : String(a.contentId);
      if (typeof a.operationKey === 'string') return asks.result(a.operationKey, asks.store.get(a.operationKey), contentId);
      const op = asks.lookup({ chainId: a.chainId === undefined ? null : String(a.chainId), clientRequestId: a.clientRequestId as string, walletAddress: a.walletAddress as string });
      return asks.result(undefined, op, contentId);
    }),
  ];
}
