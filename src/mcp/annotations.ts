// What each tool does to the world, as MCP tool annotations: a host uses them to decide what needs its user's
// confirmation. A tool that pays, stakes or signs with the wallet is destructive and open-world (it cannot be taken
// back, and it reaches the service and the chain); a pure read is read-only. Repeating a spend is safe (the same file
// or vote resumes and never pays twice), hence idempotent. One table, by tool name, so that tools rebuilt on the core
// keep the same hints; a tool missing from it fails the server's start.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/** Pays or stakes from the wallet, or signs with it. */
const SPENDS_OR_SIGNS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };
/** Changes what the service records, signs and pays nothing. */
const RECORDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
/** Reads from the service or the chain. */
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: true };
/** Reads local files or computes offline. */
const READS_LOCAL: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

export const TOOL_ANNOTATIONS: Record<string, ToolAnnotations> = {
  loopsign_ask: SPENDS_OR_SIGNS,
  loopsign_rate: SPENDS_OR_SIGNS,
  // The wallet signs each upload's challenge.
  loopsign_upload_image: SPENDS_OR_SIGNS,
  loopsign_confirm: RECORDS,
  loopsign_templates: READS,
  loopsign_quote: READS,
  loopsign_status: READS,
  loopsign_result: READS,
  loopsign_wallet_balance: READS,
  loopsign_wallet_address: READS_LOCAL,
  loopsign_policy: READS_LOCAL,
  loopsign_budget: READS,
  loopsign_check_plan: READS_LOCAL,
  loopsign_rate_commit: READS_LOCAL,
  loopsign_verify_evidence: READS_LOCAL,
};

export function annotationsFor(tool: string): ToolAnnotations {
  const a = TOOL_ANNOTATIONS[tool];
  if (!a) throw new Error(`no annotations for the MCP tool ${tool} (src/mcp/annotations.ts)`);
  return a;
}
