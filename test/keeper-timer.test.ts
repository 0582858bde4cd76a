// The keeper's timer (src/sandbox/keeper.ts): passes slow down when nothing moves and a request (nudge) brings the
// fast rate back. A stopped keeper runs no pass again, nudged or not: the sandbox stops its keeper before it closes
// its server and stops anvil, and a request arriving meanwhile must not start a pass against a node that is going away.
import { describe, expect, it } from 'vitest';
import { Keeper } from '../src/sandbox/keeper.js';
import type { SandboxBeacon } from '../src/sandbox/beacon.js';
import type { SandboxChain } from '../src/sandbox/chain.js';

/** A chain on which nothing ever happens: every pass asks it for its block number, and that is all it does. */
function quietChain() {
  const seen = { reads: 0 };
  const chain = {
    blockNumber: async () => {
      seen.reads++;
      return 0n;
    },
    now: () => Math.floor(Date.now() / 1000),
  } as unknown as SandboxChain;
  return { chain, seen };
}

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 5));
};

/** Five quiet passes: the fifth schedules the next at the slow rate (a minute here) once it has finished. */
const slowedDown = async (seen: { reads: number }) => {
  await until(() => seen.reads >= 5);
  await new Promise((r) => setTimeout(r, 50));
  expect(seen.reads).toBe(5);
};

describe("the sandbox keeper's timer", () => {
  it('runs no pass after stop(), even when a request nudges it while its passes had slowed down', async () => {
    const { chain, seen } = quietChain();
    const keeper = new Keeper(chain, {} as SandboxBeacon);
    // Fast passes every 5 ms; once quiet (five passes, no request for 2 s: none ever came), one a minute.
    keeper.start(5, 60_000);
    await slowedDown(seen);
    await keeper.stop();
    const atStop = seen.reads;
    keeper.nudge();
    // A pass nudged back to the fast rate would have run several times over by now.
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.reads).toBe(atStop);
  });

  it('a nudge brings a slowed keeper back to the fast rate at once', async () => {
    const { chain, seen } = quietChain();
    const keeper = new Keeper(chain, {} as SandboxBeacon);
    keeper.start(5, 60_000);
    await slowedDown(seen);
    keeper.nudge();
    const before = seen.reads;
    await until(() => seen.reads > before);
    await keeper.stop();
  });
});
