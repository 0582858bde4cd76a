// What `budget show` and the MCP `loopsign_budget` tool are asked: one checked request type for both, so the two
// surfaces cannot drift (the CLI's flags and the tool's input are parsed by the same schema).
import * as z from 'zod';
import { UsageError } from '../errors.js';

export const budgetShowShape = {
  grant: z
    .string()
    .min(1)
    .optional()
    .describe("a grant file's path; without it, every grant recorded on this machine for the configured chain"),
};

export const budgetShowRequest = z.object(budgetShowShape).strict();

export type BudgetShowRequest = z.infer<typeof budgetShowRequest>;

/** The request from the CLI's options (commander's object may carry more keys; only the request's are taken). */
export function checkBudgetShowRequest(raw: { grant?: unknown }): BudgetShowRequest {
  const parsed = budgetShowRequest.safeParse(raw.grant === undefined ? {} : { grant: raw.grant });
  if (!parsed.success) throw new UsageError('usage', `--grant must name a grant file: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}
