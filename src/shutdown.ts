// SIGINT and SIGTERM end any command promptly and safely: the run's AbortSignal is aborted (every wait stops),
// the cleanup hooks that code registered release what it holds (the sandbox stops anvil, a store closes its
// files), with a short deadline so a stuck hook cannot keep the process alive, then one line says how to resume
// and the process exits 130 (SIGINT) or 143 (SIGTERM). Nothing here can lose money: everything signed is in the
// journal before it is sent, so the same command run again picks up where this one stopped. A second signal
// during the cleanup exits at once.
import { InterruptedError } from './errors.js';
import type { Output } from './output.js';

export type ShutdownHook = () => void | Promise<void>;
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** How long the hooks together may take before the process exits anyway. */
export const HOOK_DEADLINE_MS = 3000;

const hooks = new Set<ShutdownHook>();
const controller = new AbortController();
let stopping: StopSignal | undefined;
let installed = false;
let resumeHint = 'run the same command again to resume: a rerun picks up from its journal and never pays twice';

/** Aborted when the process is told to stop (SIGINT, SIGTERM): the CLI's `ctx.signal`. */
export const shutdownSignal: AbortSignal = controller.signal;

/**
 * Registers a cleanup to run when the process is told to stop; returns the function that unregisters it (call it
 * once the resource is released the ordinary way). Hooks run together and must be quick: they get HOOK_DEADLINE_MS.
 */
export function onShutdown(hook: ShutdownHook): () => void {
  hooks.add(hook);
  return () => void hooks.delete(hook);
}

/** What the stop line tells the user to do (the default: run the same command again). */
export function setResumeHint(hint: string): void {
  resumeHint = hint;
}

/** The signal that is stopping the process, if one is. */
export function stoppingBy(): StopSignal | undefined {
  return stopping;
}

const codeOf = (signal: StopSignal) => new InterruptedError(signal, '').exitCode;

/** Installs the handlers (once per process). `out` prints the stop line; `exit` is process.exit. */
export function installShutdown(out: Output, exit: (code: number) => never = process.exit): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(signal, out, exit));
}

async function stop(signal: StopSignal, out: Output, exit: (code: number) => never): Promise<void> {
  if (stopping !== undefined) exit(codeOf(stopping));
  stopping = signal;
  process.exitCode = codeOf(signal);
  const error = new InterruptedError(signal, `stopped by ${signal}${signal === 'SIGINT' ? ' (Ctrl-C)' : ''}`, { hint: resumeHint });
  controller.abort(error);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, HOOK_DEADLINE_MS)));
  const running = Promise.allSettled([...hooks].map(async (hook) => hook()));
  await Promise.race([running, deadline]);
  clearTimeout(timer);
  out.error(error);
  exit(error.exitCode);
}
