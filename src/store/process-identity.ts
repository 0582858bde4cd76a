// Who holds a claim (src/store/claims.ts), and whether that holder still runs. A process id alone is not an
// identity: ids are reused, soon after a crash on a busy machine and certainly after a reboot. On Linux the kernel
// gives each process a start time (field 22 of /proc/<pid>/stat, in clock ticks since boot) and each boot an id, so
// (boot, pid, start) names one process for ever; elsewhere the start time is unknown and a reused id reads as the
// holder still running, which only makes a claim wait longer, never lets two runs in.
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  pid: number;
  /** The kernel's start time of the process ('' where the platform does not tell). */
  started: string;
  /** The boot the process runs in ('' where the platform does not tell). */
  boot: string;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The state and start time of a process, from /proc; undefined when it does not exist (or there is no /proc). */
function statOf(pid: number): { state: string; started: string | undefined } | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses: count from the last one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', started: fields[19] }; // fields 3 and 22 overall
}

/** The start time of a process, from /proc; undefined when it does not run (or the platform has no /proc). */
export function startTimeOf(pid: number): string | undefined {
  return statOf(pid)?.started;
}

let self: ProcessIdentity | undefined;

export function currentProcess(): ProcessIdentity {
  return (self ??= {
    pid: process.pid,
    started: startTimeOf(process.pid) ?? '',
    boot: (read('/proc/sys/kernel/random/boot_id') ?? '').trim(),
  });
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process a claim names still runs (the same process, not a later one with its id). */
export function isRunning(holder: ProcessIdentity): boolean {
  const me = currentProcess();
  if (holder.boot !== '' && me.boot !== '' && holder.boot !== me.boot) return false; // claimed before this boot
  if (!signalable(holder.pid)) return false;
  const stat = statOf(holder.pid);
  // A zombie (killed, not yet collected by its parent: a harness that never waits, a container whose first process
  // reaps no orphans) can still be signalled and keeps its start time, but runs nothing and will never release.
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return false;
  if (holder.started === '') return true;
  return stat?.started === undefined ? true : stat.started === holder.started;
}
