// Runs SPIN on the nonce-slot model (test/model/slots.pml): spin -a, gcc, ./pan, for one configuration at a time, in a
// temporary folder of its own (nothing is written in the repository), and returns what pan reported. Used by
// test/slot-protocol.model.test.ts; by hand, `node test/model/check.mjs [name ...]` runs the named checks (all by
// default) and prints a line for each. Needs `spin` (Debian: apt-get install spin) and gcc.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODEL = fileURLToPath(new URL('./slots.pml', import.meta.url));

// The checks and what each must give. L nonces, R re-signs per intent. The two rules share their bounds; the variants
// that must fail fail within a few thousand states; the hiding node is checked with and without the guard at smaller
// bounds, because the journal's "seen" bits multiply the states (1.35 million at L=5 R=1).
// A check that must hold searches millions of states and is compiled with -O2 (pan about a quarter faster than -O1;
// gcc about 2 CPU-s); one that must fail stops within a second, and -O0 compiles in a third of a second.
export const CHECKS = {
  head: { defines: ['RULE_HEAD'], L: 6, R: 2, expect: 'violation', what: "today's rule: drop at one confirmation" },
  final: { defines: ['RULE_FINAL'], L: 6, R: 2, expect: 'holds', what: 'issue 35: give a slot up only once void' },
  reach: {
    defines: ['RULE_FINAL', 'REACH'],
    L: 6,
    R: 2,
    expect: 'violation',
    what: 'under RULE_FINAL an intent can pay through a slot signed anew (the proof is not vacuous)',
  },
  'receipts-first': {
    defines: ['RULE_FINAL', 'RECEIPTS_FIRST'],
    L: 5,
    R: 1,
    expect: 'violation',
    what: 'the receipts read before the finalized count',
  },
  'newest-only': {
    defines: ['RULE_FINAL', 'NEWEST_ONLY'],
    L: 5,
    R: 1,
    expect: 'violation',
    what: "only the newest version's receipt read",
  },
  'hiding-node': {
    defines: ['RULE_FINAL', 'HIDING_NODE'],
    L: 5,
    R: 1,
    expect: 'violation',
    what: 'a node denies a receipt the journal saw, and the slot is given up',
  },
  'hiding-node-guarded': {
    defines: ['RULE_FINAL', 'HIDING_NODE', 'SEEN_GUARD'],
    L: 5,
    R: 1,
    expect: 'holds',
    what: 'the same node, and a slot the journal saw mined is never given up',
  },
};

// pan's search depth bound: far above any depth these bounds reach (about 3,500), so nothing is cut off; pan says
// "max search depth too small" if it ever is, and the result says truncated.
const MAX_DEPTH = 1_000_000;
// pan stops with a message rather than take the machine's memory (MB); the largest check here needs about 300.
const MEMORY_LIMIT_MB = 2048;

/** Whether the spin and gcc commands are there. */
export function tools() {
  const has = (cmd, arg) => spawnSync(cmd, [arg], { stdio: 'ignore' }).status === 0;
  return { spin: has('spin', '-V'), gcc: has('gcc', '--version') };
}

function run(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, seconds: (performance.now() - started) / 1000 }));
  });
}

async function must(cmd, args, cwd) {
  const r = await run(cmd, args, cwd);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.code}:\n${r.out}`);
  return r;
}

const number = (text, re) => {
  const m = re.exec(text);
  return m ? Number(m[1]) : undefined;
};

/** Parses pan's report. */
export function parsePan(out) {
  return {
    errors: number(out, /errors: (\d+)/),
    statesStored: number(out, /(\d+) states, stored/),
    statesMatched: number(out, /(\d+) states, matched/),
    transitions: number(out, /(\d+) transitions \(= stored\+matched\)/),
    depthReached: number(out, /depth reached (\d+)/),
    errorDepth: number(out, /\(at depth (\d+)\)/),
    truncated: /max search depth too small/.test(out),
    outOfMemory: /out of memory|reached -DMEMLIM bound/.test(out),
    assertion: /assertion violated (.*) \(at depth/.exec(out)?.[1],
  };
}

/**
 * Runs one check: { defines, L, R, expect } (a CHECKS entry); maxDepth lowers pan's depth bound (to test truncation). Returns pan's figures, the seconds each step took, pan's output
 * and, when pan found an error, the counterexample's events as the model prints them (spin -t).
 */
export async function check({ defines, L, R, expect }, { maxDepth = MAX_DEPTH } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-spin-'));
  try {
    copyFileSync(MODEL, path.join(dir, 'slots.pml'));
    const flags = [...defines.map((d) => `-D${d}`), `-DL=${L}`, `-DR=${R}`];
    const spinA = await must('spin', [...flags, '-a', 'slots.pml'], dir);
    // -DSAFETY: safety properties only (assertions, end states); -DCOLLAPSE: compressed states (about half the memory).
    const opt = expect === 'holds' ? '-O2' : '-O0';
    const gcc = await must('gcc', [opt, '-DSAFETY', '-DCOLLAPSE', `-DMEMLIM=${MEMORY_LIMIT_MB}`, '-o', 'pan', 'pan.c'], dir);
    // -w22: a hash table of 2^22 slots, enough for the largest check; pan exits 0 whether or not it found an error.
    const pan = await must('./pan', [`-m${maxDepth}`, '-w22'], dir);
    const result = parsePan(pan.out);
    let trail = [];
    if (result.errors) {
      const replay = await must('spin', [...flags, '-t', 'slots.pml'], dir);
      trail = replay.out
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.startsWith('MSC: '))
        .map((l) => l.slice(5));
    }
    return { ...result, trail, seconds: { spin: spinA.seconds, gcc: gcc.seconds, pan: pan.seconds }, output: pan.out };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One line for a result. */
export function summary(name, c, r) {
  const verdict = r.errors ? `${r.errors} error (at depth ${r.errorDepth})` : 'no errors';
  const s = r.seconds;
  return (
    `${name} (L=${c.L} R=${c.R}): ${verdict}, ${r.statesStored} states stored, depth reached ${r.depthReached}` +
    `${r.truncated ? ', TRUNCATED' : ''}; spin ${s.spin.toFixed(1)} s, gcc ${s.gcc.toFixed(1)} s, pan ${s.pan.toFixed(1)} s`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = Object.entries(tools())
    .filter(([, ok]) => !ok)
    .map(([t]) => t);
  if (missing.length) {
    console.error(`${missing.join(' and ')} not found: apt-get install ${missing.join(' ')}`);
    process.exit(2);
  }
  const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(CHECKS);
  let bad = 0;
  for (const name of names) {
    const c = CHECKS[name];
    if (!c) {
      console.error(`no check named ${name}; the checks: ${Object.keys(CHECKS).join(', ')}`);
      process.exit(2);
    }
    const r = await check(c);
    const ok = !r.truncated && !r.outOfMemory && (c.expect === 'holds' ? r.errors === 0 : r.errors > 0);
    if (!ok) bad++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${summary(name, c, r)}`);
    if (process.env.SPIN_TRAIL && r.trail.length) console.log(r.trail.map((l) => `       ${l}`).join('\n'));
  }
  process.exit(bad ? 1 : 0);
}
