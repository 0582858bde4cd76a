// How a guard refuses what a service returned: a RefusedError (exit 5) with the guard's own code, the rule broken in
// details.rule (and, for a plan, the call, phase and field it was found at), and a hint saying that nothing was
// signed. The plan guard and the message guard each make theirs here, so that their refusals read alike.
import type { RefusedCode } from '../error-codes.js';
import { RefusedError } from '../errors.js';

export interface RefusalPlace {
  call?: number;
  phase?: string;
  field?: string;
}

export type Refuse = (rule: string, message: string, where?: RefusalPlace) => never;

/** A guard's refuse(rule, message, where?): `code` is its error code, `lead` begins each message, `hint` ends it. */
export function guardRefusal(code: RefusedCode, lead: string, hint: string): Refuse {
  return (rule, message, where) => {
    const at = where?.call !== undefined ? `call ${where.call}${where.phase ? ` (${where.phase})` : ''}: ` : '';
    throw new RefusedError(code, `${lead}: ${at}${message}`, { hint, details: { rule, ...where } });
  };
}
