// The one error an ask's validation throws: the field it is about, loopsign's message, and — where the service's
// own answer to the same input is known — that answer, so the sandbox can reply exactly as the service does.
// One error carries every problem found in the ask (`problems`, in the order the service would name them): the
// first is its field, message and service answer; a caller shows them all, so one round of fixes is enough.
import type { ServiceRejection } from './profiles/types.js';

export interface AskProblem {
  field: string;
  message: string;
  service?: ServiceRejection;
}

export class AskFieldError extends Error {
  readonly problems: AskProblem[];

  constructor(
    readonly field: string,
    message: string,
    readonly service?: ServiceRejection,
  ) {
    super(`${field}: ${message}`);
    this.problems = [service ? { field, message, service } : { field, message }];
  }

  /** One error for every problem found (at least one), the first leading. */
  static of(problems: AskProblem[]): AskFieldError {
    const [first, ...rest] = problems;
    const error = new AskFieldError(first!.field, first!.message, first!.service);
    if (rest.length === 0) return error;
    error.problems.push(...rest);
    error.message = `${problems.length} problems: ${problems.map((p, i) => `(${i + 1}) ${p.field}: ${p.message}`).join('; ')}`;
    return error;
  }

  /** The first problem as one line (what the service, which names one problem, would say). */
  get first(): string {
    return `${this.field}: ${this.problems[0]!.message}`;
  }
}
