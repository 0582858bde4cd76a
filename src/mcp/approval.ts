// A spend above the policy's approval threshold needs a person's yes. Over MCP the person is asked through
// elicitation: the request goes to the host's user interface, not to the model, and no tool argument can stand in
// for it. A client that declared no (form) elicitation gets no approver, so the policy refuses such a spend.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Approver } from '../policy/gate.js';
import type { Extra } from './call.js';

/** How long the person has to answer before the spend is refused (a host may show the form for a while). */
const ANSWER_WITHIN_MS = 10 * 60_000;

export function elicitationApprover(server: McpServer, extra: Extra): Approver | undefined {
  // MCP 2025-11-25: an empty elicitation capability means form mode (the older protocol's only mode).
  const e = server.server.getClientCapabilities()?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (!e || (e.form === undefined && e.url !== undefined)) return undefined;
  return async (request) => {
    try {
      const answer = await server.server.elicitInput(
        {
          mode: 'form',
          message: `loopsign asks for your approval: ${request.summary}. This is above the ${request.threshold}, so it needs your yes; your agent cannot give it.`,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title: 'Approve this spend', description: request.summary, default: false } },
            required: ['approve'],
          },
        },
        { signal: extra.signal, relatedRequestId: extra.requestId, timeout: ANSWER_WITHIN_MS },
      );
      return answer.action === 'accept' && answer.content?.approve === true;
    } catch (error) {
      // No answer (timed out, cancelled, the host failed): not a yes.
      process.stderr.write(`${JSON.stringify({ event: 'policy.approval.failed', message: `no answer to the approval request: ${(error as Error).message}` })}\n`);
      return false;
    }
  };
}
