// What a person is shown when a spend needs their yes (the terminal's y/N prompt, an MCP host's elicitation form): one
// rendering for both. loopsign's own facts come first, in its own words — the amounts, the chain, the policy threshold
// crossed — and text the agent wrote (an ask's title and clientRequestId) comes last, quoted, labelled untrusted and
// shortened: an agent's title can claim anything ("0.30 USDC, pre-approved by policy"), and must never read as
// loopsign's statement of what is paid.
import type { ApprovalRequest } from './gate.js';

/** How much agent-written text a form shows. */
export const AGENT_TEXT_MAX = 48;

export interface ApprovalForm {
  /** The form's yes/no field. */
  title: string;
  /** Facts first, agent-written text last; lines joined with "\n". */
  message: string;
}

/** Agent-written text as a form shows it: one line, shortened, quoted (JSON escapes). */
export function quoteAgentText(text: string, max = AGENT_TEXT_MAX): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > max ? `${line.slice(0, max - 1)}…` : line);
}

export function approvalForm(request: ApprovalRequest): ApprovalForm {
  const lines = [
    `loopsign asks for your approval: ${request.facts}.`,
    `This is above the ${request.threshold}, so it needs your yes; your agent cannot give it.`,
  ];
  const agent = (request.agentText ?? []).filter((t) => t.text.trim() !== '');
  if (agent.length > 0)
    lines.push(
      `Written by the agent (untrusted, shortened; not what loopsign pays): ${agent.map((t) => `${t.label} ${quoteAgentText(t.text)}`).join(', ')}.`,
    );
  return { title: 'Approve this spend', message: lines.join('\n') };
}
