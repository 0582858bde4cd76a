// The nonce-slot protocol of issue 35, checked exhaustively by SPIN at small bounds (test/model/slots.pml, run by
// test/model/check.mjs; docs/testing.md, "The model check"). Today's rule (a slot whose nonce another transaction has
// at the head is dropped and its calls signed anew) must give a double payment; the new rule (only once the nonce is
// used in the finalized chain by none of the slot's versions) must hold in every reachable state. Variants show what
// each part of the new rule is for. Needs spin and gcc: CI installs spin (.ci/run), and fails here if it is missing; a
// developer without it gets this file skipped, with the reason printed.
import { describe, expect, it } from 'vitest';
import { CHECKS, type Check, type CheckResult, check, summary, tools } from './model/check.mjs';

// Only catches a hang: a loaded machine must not fail the check (the largest search is about 9 CPU-s).
const HANG = 600_000;

const missing = Object.entries(tools())
  .filter(([, ok]) => !ok)
  .map(([tool]) => tool);
const INSTALL = `${missing.join(' and ')} not found: apt-get install ${missing.join(' ')} (the nonce-slot model check needs it)`;
if (missing.length && !process.env.CI) console.warn(`skipping test/slot-protocol.model.test.ts: ${INSTALL}`);

async function run(name: string): Promise<{ c: Check; r: CheckResult }> {
  const c = CHECKS[name];
  if (!c) throw new Error(`no check named ${name}`);
  const r = await check(c);
  console.log(summary(name, c, r));
  // Neither answer counts if pan cut its search short or ran out of memory.
  expect(r.truncated, 'pan: max search depth too small').toBe(false);
  expect(r.outOfMemory, 'pan ran out of memory').toBe(false);
  expect(r.statesStored).toBeGreaterThan(0);
  return { c, r };
}

/** A double payment: pan found the at-most-once assertion false, and the trail ends with an intent paid twice. */
function expectDoublePayment(r: CheckResult) {
  expect(r.errors).toBe(1);
  expect(r.assertion).toContain('x_head<=1');
  expect(r.trail.at(-1)).toMatch(/^intent \d is carried 2 times by the head$/);
}

describe('the nonce-slot protocol, checked exhaustively by SPIN', () => {
  // Never skipped: a machine without spin fails here with the one line that says how to get it (.ci/run installs it;
  // the README names it among the prerequisites).
  if (missing.length) {
    it('has spin and gcc (CI installs them in .ci/run)', () => {
      throw new Error(INSTALL);
    });
    return;
  }

  it(
    "today's rule (drop a slot once its nonce is taken at the head) pays an intent twice after a reorg",
    async () => {
      const { r } = await run('head');
      expectDoublePayment(r);
      console.log(r.trail.map((line) => `  ${line}`).join('\n'));
      // The known limit: the calls were signed anew, then a reorg took the taker back and both slots were mined.
      expect(r.trail.some((line) => /nonce is taken at the head: drop it/.test(line))).toBe(true);
      expect(r.trail.some((line) => /^a reorg takes nonce \d+ off the head$/.test(line))).toBe(true);
    },
    HANG,
  );

  it(
    'the new rule (give a slot up only once its nonce is final as used by none of its versions) holds in every state',
    async () => {
      const { r } = await run('final');
      expect(r.errors).toBe(0);
      // The whole space at these bounds, not a corner of it: millions of states (3.6 million when written).
      expect(r.statesStored).toBeGreaterThan(1_000_000);
    },
    HANG,
  );

  it(
    'under the new rule an intent can still pay through a slot signed anew: the proof is not vacuous',
    async () => {
      const { r } = await run('reach');
      expect(r.errors).toBe(1);
      expect(r.trail.some((line) => /^slot \d+ is void: give it up$/.test(line))).toBe(true);
      expect(r.trail.at(-1)).toMatch(/^the head includes slot [1-9]\d* \(intent \d\)/);
    },
    HANG,
  );

  it(
    'the order of the reads matters: receipts read before the finalized count pay twice',
    async () => {
      expectDoublePayment((await run('receipts-first')).r);
    },
    HANG,
  );

  it(
    "every version's receipt matters: reading only the fee bump's pays twice when the original was mined",
    async () => {
      expectDoublePayment((await run('newest-only')).r);
    },
    HANG,
  );

  it(
    'a slot the journal saw mined is never given up on a node that now denies its receipt: without that, twice; with it, never',
    async () => {
      const hiding = (await run('hiding-node')).r;
      expectDoublePayment(hiding);
      expect(hiding.trail.some((line) => /^the journal sees slot \d+ mined$/.test(line))).toBe(true);
      const guarded = (await run('hiding-node-guarded')).r;
      expect(guarded.errors).toBe(0);
    },
    HANG,
  );

  it(
    "a search cut short by pan's depth bound is reported as truncated, so it never passes for a proof",
    async () => {
      const c = CHECKS.head;
      if (!c) throw new Error('no check named head');
      const r = await check(c, { maxDepth: 50 });
      expect(r.truncated).toBe(true);
    },
    HANG,
  );
});
