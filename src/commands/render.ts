// Readable renderings of service documents. Untrusted rater text keeps its markers; the service's next action is
// shown only as a service word (an agent may act on a line labelled "next"). Terminal controls are made inert by Output.
import { arrayField, objectField, type ServiceDoc } from '../service/doc.js';
import { serviceWord } from '../output.js';
import { forCli } from '../hints.js';
import { describeTxState, type TxStates } from '../wallet/tx-states.js';
import { statusAmounts, type AmountView } from '../ask/amounts-view.js';

/**
 * What each round state (RoundVotingEngine's roundCore.state, chain.md §4.2) means to the asker. SettlementPending
 * has a public verdict that is not final: the round's stakes and rewards wait for its payout snapshot (or the
 * engine's one-hour timeout settlement). A tie has no verdict.
 */
const ROUND_STATES: Record<number, string> = {
  0: 'Open (votes are still coming in or being revealed)',
  1: 'Settled',
  2: 'Cancelled (too few votes before the round ended)',
  3: 'Tied (up and down stakes are equal: no verdict)',
  4: 'RevealFailed (too few votes were revealed)',
  5: 'SettlementPending (the verdict is in; stakes and rewards wait for the settlement snapshot, normally within an hour)',
};

export function renderResult(r: ServiceDoc): string {
  const d = objectField(r, 'distribution') ?? {};
  const state = typeof d.state === 'number' ? ROUND_STATES[d.state] : undefined;
  const readyAt = serviceWord(r.estimatedReadyAt);
  const lines = [
    `answer: ${String(r.answer)}${r.ready ? '' : ' (not final)'}`,
    `  rating        ${d.ratingBps !== undefined ? `${(Number(d.ratingBps) / 100).toFixed(2)} % up` : 'n/a'} (${String(objectField(d, 'up')?.count ?? 0)} up, ${String(objectField(d, 'down')?.count ?? 0)} down, ${String(d.revealedCount ?? 0)} revealed)`,
    `  votes         ${String(r.voteCount ?? 0)}`,
    ...(state ? [`  round         ${state}`] : []),
    `  finality      ${String(r.finalityStatus ?? 'n/a')}${readyAt && /^[0-9]+$/.test(readyAt) ? ` (expected by ${new Date(Number(readyAt) * 1000).toISOString()})` : ''}`,
    `  next          ${forCli(serviceWord(r.recommendedNextAction)) ?? 'n/a'}`,
  ];
  lines.push(...paidLines(statusAmounts(objectField(r, 'operation'))));
  if (r.rationaleSummary) lines.push(`  feedback      ${String(r.rationaleSummary)}`);
  return lines.join('\n');
}

/** "  bounty        1.5 USDC (1.455 USDC to raters after the 3 % frontend fee)" and the bonus's line (or nothing). */
export function paidLines(amounts: Record<string, AmountView>): string[] {
  const line = (label: string, paid: AmountView | undefined, toRaters: AmountView | undefined) =>
    paid ? [`  ${label.padEnd(13)} ${paid.display}${toRaters ? ` (${toRaters.display} to raters after the 3 % frontend fee)` : ''}`] : [];
  return [
    ...line('bounty', amounts.bounty, amounts.bountyAfterFrontendFee),
    ...line('bonus', amounts.feedbackBonus, amounts.feedbackBonusAfterFrontendFee),
  ];
}

export function renderStatus(s: ServiceDoc): string {
  const contentIds = (arrayField(s, 'contentIds') ?? []).filter((id) => typeof id === 'string' || typeof id === 'number');
  return [
    `status: ${String(s.status)}${s.ready ? ' (ready)' : s.terminal ? ' (terminal)' : ''}`,
    `  operation     ${String(s.operationKey ?? 'n/a')}`,
    `  content       ${contentIds.join(', ') || 'n/a'}`,
    ...paidLines(statusAmounts(s)),
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

/** "  to raters     1.455 USDC of the bounty, 0.97 USDC of the bonus, after the 3 % frontend fee" (or nothing). */
export function toRatersLine(amounts: Record<string, AmountView>): string | undefined {
  const parts = [
    amounts.bountyAfterFrontendFee && `${amounts.bountyAfterFrontendFee.display} of the bounty`,
    amounts.feedbackBonusAfterFrontendFee && `${amounts.feedbackBonusAfterFrontendFee.display} of the bonus`,
  ].filter((p) => p !== undefined);
  return parts.length ? `  to raters     ${parts.join(', ')}, after the 3 % frontend fee` : undefined;
}
