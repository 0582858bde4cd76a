// What the registry would refuse only after money moved, checked before anything is signed. A wallet_calls plan is
// reserve, approve, submit, sent one after another: the submit's simulation runs once the reservation and the approval
// are mined, and the live registry's refusals carry no reason (empty revert data). A category outside RateLoop's 1 to 8
// is refused by the ask's schema (src/protocol/categories.ts) before the service is asked; what is left is the
// question's key (chain.md §6.6: category, media, details, context URL, title, tags), which the registry takes once
// per chain: its public submissionKeyUsed view says whether it already is, for the keys loopsign computed from the
// user's own ask, never the service's word.
import type { Hex, PublicClient } from 'viem';
import { RefusedError } from '../errors.js';
import { contentRegistryAbi } from '../protocol/abi.js';
import type { GuardContext } from '../wallet/plan-guard.js';

/**
 * No question of the ask is on chain already (the registry's submissionKeyUsed, for the keys loopsign computed from
 * the ask itself), or the ask is refused before anything is signed. Two equal questions in one bundle are refused too.
 */
export async function refuseSubmittedQuestions(client: PublicClient, g: GuardContext): Promise<void> {
  const registry = g.chain.contracts.contentRegistry as Hex | undefined;
  if (!registry) return;
  const keys = g.hashes.questions.map((q) => q.submissionKey);
  const used = await Promise.all(
    keys.map((key) => client.readContract({ address: registry, abi: contentRegistryAbi, functionName: 'submissionKeyUsed', args: [key] })),
  );
  keys.forEach((key, i) => {
    const twice = keys.indexOf(key) !== i;
    if (!used[i] && !twice) return;
    const which = keys.length > 1 ? `question ${i + 1} of the bundle` : 'this question';
    throw new RefusedError(
      'question_already_submitted',
      twice
        ? `${which} is the same as question ${keys.indexOf(key) + 1} (title, tags, category, context URL, media and details): the ContentRegistry takes each question once; nothing was signed`
        : `${which} is already on chain ${g.chain.chainId} (its key ${key} is used: the same title, tags, category, context URL, media and details were submitted before), and the ContentRegistry takes each question once; nothing was signed`,
      {
        hint: 'to ask it again, change the title, tags, context URL, media or details (a new clientRequestId alone is the same question); to see an earlier answer, `loopsign status`',
        details: { submissionKey: key, question: i },
      },
    );
  });
}
