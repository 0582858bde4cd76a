// The CLI's way to ask a human to approve a spend above the policy's threshold: a yes/no prompt on the terminal,
// only when both stdin and stderr are terminals and the output is not JSON. An agent that shells out has neither,
// so above the threshold its spend is refused (docs/policy.md says what this can and cannot stop).
import type { Output } from '../output.js';
import type { Approver } from './gate.js';
import { approvalForm } from './approval-form.js';

export function terminalApprover(out: Output): Approver | undefined {
  if (out.json || process.stdin.isTTY !== true || process.stderr.isTTY !== true) return undefined;
  return async (request) => {
    const { confirm } = await import('@inquirer/prompts');
    const form = approvalForm(request);
    return confirm({ message: `${form.message}\n${form.title}?`, default: false }, { output: process.stderr });
  };
}
