// The service's rules for the text of a question, applied locally so that a question it would refuse is refused
// before anything is sent (exit 2), with the service's own answer attached for the sandbox: blocked terms in a title
// or a tag (its content moderation list, case-insensitive, anywhere in the text), and the head-to-head rules — two
// options with single-letter keys and short labels, and a title that asks which is preferred and names both as
// `A = <label>` and `B = <label>` (the parser of packages/agents/src/x402QuestionPayload.ts at the profile's commit).
import { AskFieldError } from './ask-errors.js';
import type { ServiceProfile } from './profiles/types.js';

const hasBlockedTerm = (text: string, terms: readonly string[]) => {
  const lower = text.toLowerCase();
  return terms.some((t) => lower.includes(t.toLowerCase()));
};

/** A title (trimmed) holding a blocked term. */
export function checkTitleText(title: string, field: string, profile: ServiceProfile): void {
  if (hasBlockedTerm(title, profile.ask.questionText.blockedTerms)) {
    throw new AskFieldError(
      `${field}.title`,
      'contains a term the service refuses (its content moderation list); reword the question',
      profile.ask.rejections.prohibitedTitle,
    );
  }
}

/** Tags (trimmed, non-empty) holding a blocked term. */
export function checkTagsText(tags: string[], field: string, profile: ServiceProfile): void {
  const blocked = tags.filter((t) => hasBlockedTerm(t, profile.ask.questionText.blockedTerms));
  if (blocked.length > 0) {
    throw new AskFieldError(
      field,
      `${blocked.map((t) => JSON.stringify(t)).join(', ')} contain${blocked.length === 1 ? 's' : ''} a term the service refuses (its content moderation list)`,
      profile.ask.rejections.prohibitedTags,
    );
  }
}

const KEY = /^[A-Z]$/;
const VOTE_UP_IF = /\bvote\s+up\s+if\b/i;
const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * A head-to-head question (the profile's head-to-head template): valid options and a title that names them.
 * `servicePath` is the service's name for the question (questions[i]).
 */
export function checkHeadToHead(
  q: { title: string; templateId: string; templateInputs: Record<string, unknown> | null },
  field: string,
  servicePath: string,
  profile: ServiceProfile,
): void {
  const rules = profile.ask.questionText.headToHead;
  if (q.templateId !== rules.templateId) return;
  const reject = profile.ask.rejections;
  const inputs = q.templateInputs ?? {};
  const aKey = str(inputs.optionAKey).toUpperCase();
  const bKey = str(inputs.optionBKey).toUpperCase();
  const aLabel = str(inputs.optionALabel);
  const bLabel = str(inputs.optionBLabel);
  const inputsField = `${field}.templateInputs`;
  if (!KEY.test(aKey) || !KEY.test(bKey))
    throw new AskFieldError(
      inputsField,
      `optionAKey and optionBKey must each be one letter A-Z (the ${rules.templateId} template)`,
      reject.headToHeadInputs(servicePath),
    );
  if (aKey === bKey)
    throw new AskFieldError(
      inputsField,
      `optionAKey and optionBKey must differ (both are "${aKey}")`,
      reject.headToHeadInputs(servicePath),
    );
  for (const [name, label] of [
    ['optionALabel', aLabel],
    ['optionBLabel', bLabel],
  ] as const) {
    if (!label)
      throw new AskFieldError(
        `${inputsField}.${name}`,
        `is required by the ${rules.templateId} template`,
        reject.headToHeadInputs(servicePath),
      );
    if (label.length > rules.maxLabelLength)
      throw new AskFieldError(
        `${inputsField}.${name}`,
        `must be ${rules.maxLabelLength} characters or fewer (it is ${label.length})`,
        reject.headToHeadInputs(servicePath),
      );
  }
  const title = q.title.trim();
  if (VOTE_UP_IF.test(title)) {
    throw new AskFieldError(
      `${field}.title`,
      'a head-to-head title asks which option voters prefer; avoid "vote up if" phrasing',
      reject.headToHeadTitle('Head-to-head titles should ask which option voters prefer. Avoid vote-up-if phrasing.'),
    );
  }
  const built = `Do you prefer A = ${aLabel} or B = ${bLabel}?`;
  if (built.length > rules.maxTitleLength) {
    throw new AskFieldError(
      inputsField,
      `the option labels are too long: "${built}" exceeds ${rules.maxTitleLength} characters; shorten them`,
      reject.headToHeadTitle(`Combined question exceeds ${rules.maxTitleLength} characters — shorten option names.`),
    );
  }
  const markerA = `A = ${aLabel}`;
  const markerB = `B = ${bLabel}`;
  if (!title.includes(markerA) || !title.includes(markerB)) {
    throw new AskFieldError(
      `${field}.title`,
      `a head-to-head title must name both options exactly, as "${markerA}" and "${markerB}" (e.g. "${built}")`,
      reject.headToHeadTitle(`Include both option names in the question, e.g. ${markerA} and ${markerB}.`),
    );
  }
}
