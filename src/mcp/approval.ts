// What only the person may decide is put to them through elicitation: the request goes to the host's user
// interface, not to the model, and no tool argument can stand in for it. A spend above the policy's approval
// threshold needs their yes, and so do confidentiality terms the wallet would sign (src/rate/gated.ts). A client
// that declared no (form) elicitation gets no one to ask: the policy then refuses such a spend, and the terms are
// not accepted.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AskPerson } from '../context.js';
import type { Approver } from '../policy/gate.js';
import { approvalForm } from '../policy/approval-form.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** Where a question to the person belongs: the run's signal (its end withdraws the question) and the call that started it. */
export interface AskingFor {
  signal: AbortSignal;
  relatedRequestId: RequestId;
}

/** How long the person has to answer before the answer counts as no (a host may show the form for a while). */
const ANSWER_WITHIN_MS = 10 * 60_000;

/** A yes-or-no form the host shows its user; undefined when the client cannot show one. */
export function elicitationAsker(server: McpServer, run: AskingFor): AskPerson | undefined {
  // MCP 2025-11-25: an empty elicitation capability means form mode (the older protocol's only mode).
  const e = server.server.getClientCapabilities()?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (!e || (e.form === undefined && e.url !== undefined)) return undefined;
  return async ({ title, message }) => {
    try {
      const answer = await server.server.elicitInput(
        {
          mode: 'form',
          message,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title, default: false } },
            required: ['approve'],
          },
        },
        { signal: run.signal, relatedRequestId: run.relatedRequestId, timeout: ANSWER_WITHIN_MS },
      );
      return answer.action === 'accept' && answer.content?.approve === true;
    } catch (error) {
      // No answer (timed out, cancelled, the host failed): not a yes.
      process.stderr.write(
        `${JSON.stringify({ event: 'mcp.elicitation.failed', message: `no answer from the person: ${(error as Error).message}` })}\n`,
      );
      return false;
    }
  };
}

export function elicitationApprover(ask: AskPerson | undefined): Approver | undefined {
  if (!ask) return undefined;
  return (request) => ask(approvalForm(request));
}
