// LOOPSIGN_TIMINGS=1: how long each phase of a run took — unlocking the keystore, service calls, signing, waiting
// for blocks, the reservation's minimum age, confirmation, the database's checkpoints — written to stderr as one JSON line when the process
// exits (never stdout; off by default, and then nothing is measured). Phases done concurrently each count in
// full, so their sum can exceed the total. bench/ask.mjs prints the breakdown. The CLI turns it on from its
// environment when it starts (src/cli.ts).
let enabled = false;

export function enableTimings(): void {
  enabled = true;
}
const phases = new Map<string, { ms: number; count: number }>();

export type Phase = 'unlock' | 'service' | 'confirmation' | 'signing' | 'blocks' | 'reservation age' | 'checkpoint';

export async function timed<T>(phase: Phase, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const t0 = performance.now();
  try {
    return await work();
  } finally {
    if (phases.size === 0) process.once('exit', report);
    const p = phases.get(phase) ?? { ms: 0, count: 0 };
    p.ms += performance.now() - t0;
    p.count++;
    phases.set(phase, p);
  }
}

function report(): void {
  // performance.now() counts from the process's start: the total includes node's own start-up.
  const out = {
    event: 'timings',
    totalMs: Math.round(performance.now()),
    phases: Object.fromEntries([...phases].map(([k, v]) => [k, { ms: Math.round(v.ms), count: v.count }])),
  };
  process.stderr.write(JSON.stringify(out) + '\n');
}
