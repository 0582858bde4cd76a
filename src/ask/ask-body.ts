// An ask body checked locally, as every path that sends or checks one does (ask, quote, links, check-plan): a
// seed-shaped body translated into what the service accepts (or refused, naming the field), then validated by the
// service's own rules. No network, no keystore.
import { UsageError } from '../errors.js';
import { checkPayable } from '../amounts.js';
import { checkAddress } from '../address.js';
import { arrayField, isDoc } from '../service/doc.js';
import { AskFieldError, normalizeAsk, translateAsk, type NormalizedAsk } from '../protocol/ask-normalize.js';
import { fieldDescription } from '../protocol/ask-schema.js';
import { DEFAULT_PROFILE, type ServiceProfile } from '../protocol/profiles/index.js';
import type { Translation } from '../protocol/profiles/types.js';
import { TEMPLATES } from '../protocol/templates.js';

export interface LoadedAsk {
  /** What is sent: the file, made live-shaped when it was seed-shaped (never a field the service refuses). */
  body: Record<string, unknown>;
  ask: NormalizedAsk;
  /** What the translation of a seed-shaped file changed (empty for a live-shaped file). */
  translations: Translation[];
}

/**
 * A user's ask body checked locally: a seed-shaped body is translated into what the service accepts (or refused,
 * naming the field), then validated by the service's own rules. `now` (unix seconds) is the clock the translation
 * judges a bountyStartBy by. Throws UsageError (exit 2) naming the field.
 */
export function checkAskBody(
  raw: unknown,
  where: string,
  now: number,
  profile: ServiceProfile = DEFAULT_PROFILE,
  options: { requireMaxPayment?: boolean } = {},
): LoadedAsk {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new UsageError('invalid_ask', `${where} must hold a JSON object`);
  try {
    const { body, translations } = translateAsk(raw, now, profile);
    const ask = normalizeAsk(withPlaceholderImages(body), { templates: TEMPLATES, profile, ...options });
    checkPayableAmounts(ask, where);
    // Addresses the user typed, checksum included (viem would refuse a bad one later, as an internal error).
    if (ask.walletAddress !== null) checkAddress(ask.walletAddress, `${where}: walletAddress`);
    if (ask.feedbackBonus?.awarder) checkAddress(ask.feedbackBonus.awarder, `${where}: feedbackBonus.awarder`);
    return { body, ask, translations };
  } catch (error) {
    if (error instanceof AskFieldError) throw askUsageError(error, where);
    throw error;
  }
}

/**
 * An ask's problems as the usage error every surface shows: each problem's path, what is wrong and what to write
 * there (the schema's description of the field: the same words an MCP client reads in tools/list).
 */
export function askUsageError(error: AskFieldError, where: string): UsageError {
  const problems = error.problems.map((p) => {
    const fix = fieldDescription(p.field);
    return { field: p.field, message: p.message, ...(fix ? { fix } : {}) };
  });
  return new UsageError('invalid_ask', `${where}: ${error.message}`, {
    ...(problems.length > 1
      ? { hint: `fix all ${problems.length} fields named (details.problems says what each takes), then try again; nothing was sent` }
      : {}),
    details: { field: error.field, problems },
  });
}

/**
 * Amounts no payment can have (above uint256, or above a billion tokens) are refused here, before a quote or an ask
 * is sent: the service would quote them, or fail deep inside its ABI encoder.
 */
function checkPayableAmounts(ask: NormalizedAsk, where: string): void {
  checkPayable(ask.bounty.amount, ask.bounty.asset, 'bounty.amount', where);
  if (ask.feedbackBonus) checkPayable(ask.feedbackBonus.amount, ask.feedbackBonus.asset, 'feedbackBonus.amount', where);
  if (ask.maxPaymentAmount !== null) checkPayable(ask.maxPaymentAmount, ask.bounty.asset, 'maxPaymentAmount', where);
}

/** Local image files (question.imageFiles) count as images for validation; they become real URLs on upload. */
function withPlaceholderImages(body: object): object {
  const b: unknown = structuredClone(body);
  const questions = arrayField(b, 'questions') ?? (isDoc(b) && b.question ? [b.question] : []);
  for (const q of questions) {
    const files = arrayField(q, 'imageFiles');
    if (!isDoc(q) || files === undefined) continue;
    // Already in the copy: the question is the clone's own object, so it is written in place.
    const urls = q.imageUrls ?? [];
    (q as Record<string, unknown>).imageUrls = [
      ...(Array.isArray(urls) ? urls : [urls]),
      ...files.map(
        (_, i) =>
          `https://placeholder.invalid/api/attachments/images/att_localimagefile${String(i).padStart(4, '0')}.webp#sha256=0x${'0'.repeat(64)}`,
      ),
    ];
  }
  return b as object;
}
