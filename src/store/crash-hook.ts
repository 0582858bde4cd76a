// Test hook for the crash-recovery suite: LOOPSIGN_CRASH_AFTER=<step> makes the process SIGKILL itself right after
// that step is committed. It can only make loopsign stop; it never changes what is sent. The CLI arms it from its
// environment when it starts (src/cli.ts); nothing else does, so a process that was not asked never stops here.
let crashAfter: string | undefined;

export function armCrashHook(step: string | undefined): void {
  crashAfter = step || undefined;
}

export function crashHook(step: string): void {
  if (crashAfter !== undefined && crashAfter === step) process.kill(process.pid, 'SIGKILL');
}
