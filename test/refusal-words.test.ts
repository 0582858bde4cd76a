// Reports that read right (issue 36, item 6), for the two refusals that are not the caller's mistake: a run that
// finds its operation claimed by another loopsign process is "busy, retry" (exit 9, documented), not a usage error;
// a spend a person declined says so and says not to retry, instead of advising an MCP host with elicitation.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainForProfile } from '../src/chains/index.js';
import { EXIT_MEANING, ExitCode, type LoopsignError } from '../src/errors.js';
import { ERROR_CODES } from '../src/error-codes.js';
import { errorDocument } from '../src/mcp/tool-errors.js';
import { errorBody, Output } from '../src/output.js';
import { loopsignPaths } from '../src/paths.js';
import { builtInPolicy } from '../src/policy/default.js';
import { PolicyGate } from '../src/policy/gate.js';
import { Store } from '../src/store/db.js';
import { Operation } from '../src/store/operation.js';
import { ROOT } from './helpers/cli.js';

function quietOut(): Output {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  return new Output({ json: true, quiet: false, debug: false }, { stdout: sink, stderr: sink });
}

describe('a run that finds its operation claimed', () => {
  it('is busy (exit 9, journal_locked), says nothing was sent and to run it again; the exit code is documented', async () => {
    const store = await Store.open(mkdtempSync(path.join(tmpdir(), 'loopsign-busy-')));
    const id = `ask-${'ab'.repeat(16)}`;
    const first = await Operation.open(store, 'ask', id, {
      chainId: 31337,
      wallet: `0x${'11'.repeat(20)}`,
      data: { clientRequestId: 'busy-1', request: {} },
    });
    const error = (await Operation.open(store, 'ask', id, {
      chainId: 31337,
      wallet: `0x${'11'.repeat(20)}`,
      data: { clientRequestId: 'busy-1', request: {} },
    }).catch((e: unknown) => e)) as LoopsignError;
    await first.close();
    expect(error.code).toBe('journal_locked');
    expect(error.exitCode).toBe(9);
    expect(ERROR_CODES.journal_locked.exit).toBe(ExitCode.busy);
    expect(errorBody(error, false)).toMatchObject({ code: 'journal_locked', exitCode: 9 });
    expect(error.message).toMatch(/sent nothing/);
    expect(error.hint).toMatch(/run the same command again/);
    expect(EXIT_MEANING[9]).toMatch(/^busy/);
    for (const doc of ['docs/cli.md', 'docs/agents.md', 'docs/errors.md'])
      expect(readFileSync(path.join(ROOT, doc), 'utf8'), doc).toMatch(/\| 9 \| busy/);
    // Once the first run let go, the same open succeeds: busy was the truth.
    const again = await Operation.open(store, 'ask', id, {
      chainId: 31337,
      wallet: `0x${'11'.repeat(20)}`,
      data: { clientRequestId: 'busy-1', request: {} },
    });
    await again.close();
  });
});

describe('a spend a person declined', () => {
  for (const builtIn of [false, true]) {
    it(`says a person declined and not to retry (${builtIn ? 'built-in default policy' : 'a policy file'}), in the CLI and over MCP`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-declined-'));
      const env = { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_STATE_HOME: path.join(dir, 'state') };
      const flag = builtIn ? undefined : path.join(dir, 'policy.json');
      if (flag) writeFileSync(flag, JSON.stringify({ version: 1, approvalThreshold: { maxUsdc: '1000000', maxLrep: '1000000' } }));
      const fallback = builtIn ? builtInPolicy : undefined;
      const gate = await PolicyGate.load(
        quietOut(),
        { flag, env, paths: loopsignPaths(env) },
        () => Store.open(mkdtempSync(path.join(tmpdir(), 'loopsign-declined-db-'))),
        async () => false,
        fallback,
      );
      const error = (await gate
        .preflightRating(chainForProfile(31337), '7', 3_000_000n, `rate-${'cd'.repeat(16)}`)
        .catch((e: unknown) => e)) as LoopsignError;
      expect(error.code).toBe('approval_declined');
      expect(error.exitCode).toBe(5);
      for (const hint of [error.hint!, errorDocument(error, false).error.hint as string]) {
        expect(hint).toMatch(/a person declined/i);
        expect(hint).toMatch(/do not retry/i);
        expect(hint).not.toMatch(/elicitation|run it where you can answer/);
      }
      expect(ERROR_CODES.approval_declined.says).toMatch(/do not retry/i);
    });
  }
});
