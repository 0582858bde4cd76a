// Following an ask to its result: poll status no faster than pollAfterMs, honour Retry-After, give up at the
// timeout with exit 7 (not ready) — never pretend a pending result is final. A cancelled wait (the MCP server's
// request signal) stops polling between two polls, also exit 7: it only ever waits, so nothing is left half done and
// running the same command again picks the ask up where it is.
import { NotReadyError, ServiceError } from '../errors.js';
import type { Output } from '../output.js';
import type { ServiceClient } from '../service/client.js';
import type { ServiceDoc } from '../service/doc.js';

export interface WaitOptions {
  timeoutSeconds: number;
  /** Lower bound on polling; the service's pollAfterMs wins when larger. */
  minPollMs?: number;
  /** Stops the wait (between polls) when aborted. */
  signal?: AbortSignal;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function cancelled(operationKey: string): NotReadyError {
  return new NotReadyError('wait_cancelled', `the wait for ${operationKey} was cancelled; the ask itself is unaffected`, {
    hint: `run \`loopsign status --operation-key ${operationKey} --wait\` (or the same ask again) to pick it up; nothing is paid twice`,
    details: { operationKey },
  });
}

/** How long the service asks to wait before the next poll: a whole number of milliseconds, else the 5 s default. */
export function pollAfterMs(status: ServiceDoc): number {
  const v = status.pollAfterMs;
  const ms = typeof v === 'string' && /^[0-9]{1,9}$/.test(v) ? Number(v) : v;
  // NaN, a negative or fractional number, an array or true would make the wait a busy loop (or no wait at all).
  return typeof ms === 'number' && Number.isSafeInteger(ms) && ms >= 0 ? ms : 5000;
}

export async function waitForReady(service: ServiceClient, operationKey: string, out: Output, options: WaitOptions): Promise<ServiceDoc> {
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  const spinner = await out.spinner('wait', `waiting for ${operationKey.slice(0, 10)}… to settle`);
  try {
    for (;;) {
      if (options.signal?.aborted) {
        out.progress('wait.cancelled', `stopped waiting for ${operationKey.slice(0, 10)}…: the call was cancelled`);
        throw cancelled(operationKey);
      }
      let status: ServiceDoc;
      let pollMs: number;
      try {
        status = await service.status(operationKey);
        if (status.ready === true || status.terminal === true) {
          spinner.succeed(status.ready ? 'the round has settled' : `the ask is ${String(status.status)}`);
          return status;
        }
        pollMs = Math.max(options.minPollMs ?? 0, pollAfterMs(status));
        spinner.update(`status ${String(status.status)}; next check in ${(pollMs / 1000).toFixed(1)} s`);
      } catch (error) {
        const retryAfter = (error as ServiceError).details?.retryAfterSeconds;
        if (!(error instanceof ServiceError) || retryAfter === undefined) throw error;
        pollMs = Number(retryAfter) * 1000;
      }
      if (Date.now() + pollMs > deadline) {
        spinner.fail('timed out');
        throw new NotReadyError('wait_timeout', `the ask ${operationKey} was not ready within ${options.timeoutSeconds} s`, {
          hint: `run \`loopsign status --operation-key ${operationKey} --wait\` later; waiting again is safe and creates nothing new`,
          details: { operationKey },
        });
      }
      await sleep(pollMs, options.signal);
    }
  } finally {
    spinner.stop();
  }
}
