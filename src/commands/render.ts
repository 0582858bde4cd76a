// Readable renderings of service documents. Untrusted rater text keeps its markers; every service string is printed
// without escape sequences or control characters, and the service's next action only as a service word.
import type { Json } from '../service/client.js';
import { printable, serviceWord } from '../output.js';

const text = (v: unknown) => printable(String(v));

export function renderResult(r: Json): string {
  const d = (r.distribution ?? {}) as Json;
  const lines = [
    `answer: ${text(r.answer)}${r.ready ? '' : ' (not final)'}`,
    `  rating        ${d.ratingBps !== undefined ? `${(Number(d.ratingBps) / 100).toFixed(2)} % up` : 'n/a'} (${text(d.up?.count ?? 0)} up, ${text(d.down?.count ?? 0)} down, ${text(d.revealedCount ?? 0)} revealed)`,
    `  votes         ${text(r.voteCount ?? 0)}`,
    `  finality      ${text(r.finalityStatus ?? 'n/a')}`,
    `  next          ${serviceWord(r.recommendedNextAction) ?? 'n/a'}`,
  ];
  if (r.rationaleSummary) lines.push(`  feedback      ${text(r.rationaleSummary)}`);
  return lines.join('\n');
}

export function renderStatus(s: Json): string {
  return [
    `status: ${text(s.status)}${s.ready ? ' (ready)' : s.terminal ? ' (terminal)' : ''}`,
    `  operation     ${text(s.operationKey ?? 'n/a')}`,
    `  content       ${text(((s.contentIds as string[] | undefined) ?? []).join(', ') || 'n/a')}`,
    `  next          ${serviceWord(s.nextAction) ?? 'n/a'}`,
  ].join('\n');
}
