// Readable renderings of service documents. Untrusted rater text keeps its markers; the service's next action is
// shown only as a service word (an agent may act on a line labelled "next"). Terminal controls are made inert by Output.
import { arrayField, objectField, type ServiceDoc } from '../service/doc.js';
import { serviceWord } from '../output.js';
import { forCli } from '../hints.js';
import { describeTxState, type TxStates } from '../wallet/tx-states.js';

export function renderResult(r: ServiceDoc): string {
  const d = objectField(r, 'distribution') ?? {};
  const lines = [
    `answer: ${String(r.answer)}${r.ready ? '' : ' (not final)'}`,
    `  rating        ${d.ratingBps !== undefined ? `${(Number(d.ratingBps) / 100).toFixed(2)} % up` : 'n/a'} (${String(objectField(d, 'up')?.count ?? 0)} up, ${String(objectField(d, 'down')?.count ?? 0)} down, ${String(d.revealedCount ?? 0)} revealed)`,
    `  votes         ${String(r.voteCount ?? 0)}`,
    `  finality      ${String(r.finalityStatus ?? 'n/a')}`,
    `  next          ${forCli(serviceWord(r.recommendedNextAction)) ?? 'n/a'}`,
  ];
  if (r.rationaleSummary) lines.push(`  feedback      ${String(r.rationaleSummary)}`);
  return lines.join('\n');
}

export function renderStatus(s: ServiceDoc): string {
  const contentIds = (arrayField(s, 'contentIds') ?? []).filter((id) => typeof id === 'string' || typeof id === 'number');
  return [
    `status: ${String(s.status)}${s.ready ? ' (ready)' : s.terminal ? ' (terminal)' : ''}`,
    `  operation     ${String(s.operationKey ?? 'n/a')}`,
    `  content       ${contentIds.join(', ') || 'n/a'}`,
    `  next          ${forCli(serviceWord(s.nextAction)) ?? 'n/a'}`,
  ].join('\n');
}

/** The transactions' states, one line each under a heading (none: no lines). */
export function renderTransactions(states: TxStates, indent = '  '): string[] {
  if (states.transactions.length === 0) return [];
  return [
    `${indent}transactions`,
    ...states.transactions.map(
      (t) => `${indent}  ${t.stage.padEnd(8)} nonce ${String(t.nonce).padEnd(4)} ${t.hash}  ${describeTxState(t, states.finality)}`,
    ),
  ];
}
