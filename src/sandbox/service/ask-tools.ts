// The ask-side rateloop_ tools (service-api.md §8.4); each runs the same function as its HTTP twin. What they list
// (title, schema, annotations) is the service's, from public-tool-defs.ts.
import type { AskService } from './asks.js';
import type { McpTool } from './mcp.js';
import { invalidArguments } from './envelope.js';
import { publicTool as tool } from './public-tool-defs.js';

export function askTools(asks: AskService): McpTool[] {
  const key = (args: Record<string, unknown>) => {
    if (typeof args.operationKey !== 'string') throw invalidArguments('operationKey is required.');
    return args.operationKey;
  };
  return [
    tool('rateloop_list_result_templates', async () => asks.templates()),
    tool('rateloop_quote_question', async (a) => asks.quote(a)),
    tool('rateloop_ask_humans', async (a) => asks.ask(a)),
    tool('rateloop_confirm_ask_transactions', async (a) => asks.confirm(key(a), a)),
    tool('rateloop_confirm_feedback_bonus_transactions', async (a) => {
      if (Array.isArray(a.transactionHashes) && a.transactionHashes.length > 8)
        throw invalidArguments('transactionHashes may contain at most 8 hashes.');
      return asks.confirmBonus(key(a), a);
    }),
    tool('rateloop_get_question_status', async (a) => {
      if (typeof a.operationKey === 'string') return asks.status(a.operationKey);
      const op = asks.lookup({
        chainId: a.chainId === undefined ? null : String(a.chainId),
        clientRequestId: a.clientRequestId as string,
        walletAddress: a.walletAddress as string,
      });
      return op ? asks.statusWithHints(op) : asks.notFoundBody();
    }),
    tool('rateloop_get_result', async (a) => {
      const contentId = a.contentId === undefined ? null : String(a.contentId);
      if (typeof a.operationKey === 'string') return asks.result(a.operationKey, asks.store.get(a.operationKey), contentId);
      const op = asks.lookup({
        chainId: a.chainId === undefined ? null : String(a.chainId),
        clientRequestId: a.clientRequestId as string,
        walletAddress: a.walletAddress as string,
      });
      return asks.result(undefined, op, contentId);
    }),
  ];
}
