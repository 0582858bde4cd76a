// `npm ci && npm run demo` is the first command the README gives: the demo (scripts/demo.mjs) must run to its end on
// the built binary, every step with the exit it expects (it broke silently once when the journal files became a
// database, and again when the MCP server began reading files only under its roots).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

it('npm run demo runs every step, pays, refuses the hostile plan and the over-policy MCP ask, and pays from a grant up to its cap', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'demo.mjs')], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, `${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`).toBe(0);
  expect(r.stdout).toMatch(/^summary$/m);
  // The ask paid atomically with its bonus, and the two refusals are exit 5.
  expect(r.stdout).toMatch(/pay atomically \(EIP-7702\)[^\n]*\s0\s+3\s*$/m);
  expect(r.stdout).toMatch(/the guard refuses \(exit 5\)[^\n]*\s5\s*$/m);
  expect(r.stdout).toMatch(/an agent host over MCP[^\n]*\s5\s*$/m);
  // Issue 38: the agent's ask pays from the owner's grant (the pull, the reservation, the approval, the submit) and the
  // one past the day's cap is refused on the chain's numbers.
  expect(r.stdout).toMatch(/pulls the 1\.5 USDC bounty from the owner's grant[^\n]*\s0\s+4\s*$/m);
  expect(r.stdout).toMatch(/budget_exhausted, exit 5\)[^\n]*\s5\s*$/m);
});
