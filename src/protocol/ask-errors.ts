// The one error an ask's validation throws: the field it is about, loopsign's message, and — where the service's
// own answer to the same input is known — that answer, so the sandbox can reply exactly as the service does.
import type { ServiceRejection } from './profiles/types.js';

export class AskFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly service?: ServiceRejection,
  ) {
    super(`${field}: ${message}`);
  }
}
