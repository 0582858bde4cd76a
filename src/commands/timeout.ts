// --timeout of the commands that wait (ask, status, result, review, runs). Its own module: status, result, review and
// runs importing it from ask.ts loaded the whole ask flow (guards, store, executor) for one small function.
import { UsageError } from '../errors.js';

export function timeoutOf(value: unknown, fallback = 1800): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError('invalid_timeout', `--timeout ${String(value)} must be a positive number of seconds`);
  return n;
}
