// Bad input, property-based (fast-check): ask files, evidence packets, audit exports, keystores, service responses
// in-process. Never an uncaught exception, always a documented error class / exit code. Random argv through the built
// binary (exit codes, no stack trace): test/fuzz.cli.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizeAsk, translateAsk, AskFieldError } from '../src/protocol/ask-normalize.js';
import { verifyPacket } from '../src/evidence/packet.js';
import { verifyAuditExport } from '../src/evidence/audit.js';
import { verifyCoverageExport } from '../src/evidence/coverage.js';
import { parseStrictJson, StrictJsonError } from '../src/evidence/strict-json.js';
import { sniffKind } from '../src/evidence/detect.js';
import { parseSessionCookie } from '../src/evidence/session-cookie.js';
import { decryptKeystore } from '../src/wallet/keystore.js';
import { checkWalletPlan, checkX402Request, checkBonusPlan } from '../src/wallet/plan-guard.js';
import { checkSignedAction } from '../src/wallet/message-guard.js';
import { computeAskHashes } from '../src/protocol/ask-hashes.js';
import { TEMPLATES, resultSpecHash } from '../src/protocol/templates.js';
import { chainForProfile } from '../src/chains/index.js';
import { LoopsignError, ExitCode } from '../src/errors.js';
import { VECTORS, TEST_ADDRESS } from './helpers/cli.js';
import { capture } from './helpers/capture.js';
import { assertAsyncProperty, assertProperty } from './helpers/property.js';

export const TRIED: Record<string, number> = {};
const count = (name: string, n: number) => (TRIED[name] = n);
const json = fc.jsonValue({ maxDepth: 4 });

describe('fuzzing', () => {
  const example = JSON.parse(readFileSync(path.join(VECTORS, 'asks/world-cup-2026-48-teams.json'), 'utf8'));

  it('ask files: any JSON, and the example with any one field replaced (seed fields included), gives a field error or a valid ask', () => {
    const runs = 600;
    const seedBounty = fc.record(
      {
        amount: fc.constant('1500000'),
        requiredSettledRounds: json,
        bountyStartBy: json,
        bountyWindowSeconds: json,
        feedbackWindowSeconds: json,
      },
      { requiredKeys: ['amount'] },
    );
    const seedRound = fc.record({ epochDuration: json, maxDuration: json, questionDurationSeconds: json }, { requiredKeys: [] });
    assertProperty(
      fc.property(
        fc.oneof(
          json,
          fc.record({
            key: fc.constantFrom(...Object.keys(example), 'bounty', 'question', 'roundConfig'),
            value: fc.oneof(json, seedBounty, seedRound),
          }),
        ),
        (v) => {
          const body =
            v && typeof v === 'object' && 'key' in (v as object) && 'value' in (v as object)
              ? { ...example, [(v as { key: string }).key]: (v as { value: unknown }).value }
              : v;
          try {
            normalizeAsk(translateAsk(body, 1_795_348_800).body);
          } catch (error) {
            if (!(error instanceof AskFieldError)) throw error;
          }
        },
      ),
      { numRuns: runs },
    );
    count('ask files', runs);
  });

  it('evidence packets: mutated copies of the example never throw and never verify', () => {
    const packet = JSON.parse(readFileSync(path.join(VECTORS, 'synthetic-evidence-v4.json'), 'utf8'));
    const pin = readFileSync(path.join(VECTORS, 'synthetic-evidence-v4.spki.txt'), 'utf8').trim();
    const runs = 300;
    assertProperty(
      fc.property(
        fc.constantFrom(
          'payload',
          'signing',
          'packetDigest',
          'signature',
          'payload.aggregation',
          'payload.recomputation',
          'payload.reviewContext',
          'payload.roots',
        ),
        json,
        (where, value) => {
          const p = structuredClone(packet);
          const [a, b] = where.split('.') as [string, string | undefined];
          if (b) p[a][b] = value;
          else p[a] = value;
          const r = verifyPacket(p, { publicKey: pin, keyId: 'ed25519:2d5798c16bafaed29bdbcca0' });
          expect(r.valid).toBe(false);
          expect(r.errors.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: runs },
    );
    count('evidence packets', runs);
  });

  // One property per test: a failure's replay command selects the test (test/helpers/property.ts).
  it('evidence packets: any JSON never verifies', () => {
    assertProperty(
      fc.property(json, (v) => {
        expect(verifyPacket(v, {}).valid).toBe(false);
      }),
      { numRuns: 200 },
    );
    count('evidence packets (any JSON)', 200);
  });

  it('audit and coverage exports: any JSON never verifies', () => {
    const runs = 300;
    assertProperty(
      fc.property(json, (v) => {
        expect(verifyAuditExport(v).valid).toBe(false);
        expect(verifyCoverageExport(v).valid).toBe(false);
      }),
      { numRuns: runs },
    );
    count('audit/coverage exports', runs);
  });

  it('raw text through the strict JSON reader: a value, or a strict or syntax error', () => {
    const runs = 300;
    assertProperty(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        try {
          parseStrictJson(s);
        } catch (error) {
          if (!(error instanceof StrictJsonError) && !(error instanceof SyntaxError)) throw error;
        }
      }),
      { numRuns: runs },
    );
    count('raw evidence text', runs);
  });

  it('evidence file starts: a kind or unknown', () => {
    const runs = 300;
    const kinds = new Set(['packet', 'audit', 'coverage', 'trusted-keys', 'unknown']);
    assertProperty(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          json.map((v) => JSON.stringify(v)).map((t) => t.slice(0, Math.max(1, t.length - 3))),
        ),
        (prefix) => {
          expect(kinds.has(sniffKind(prefix))).toBe(true);
        },
      ),
      { numRuns: runs },
    );
    count('evidence file starts', runs);
  });

  it('session cookies: a cookie or a credential error that never echoes it', () => {
    const runs = 300;
    assertProperty(
      fc.property(fc.string({ minLength: 16, maxLength: 120 }), (text) => {
        try {
          expect(parseSessionCookie(text, 'the file')).toMatch(/^(__Host-)?rateloop-session=[\x21-\x7e]{16,}$/);
        } catch (error) {
          if (!(error instanceof LoopsignError)) throw error;
          expect(error.exitCode).toBe(ExitCode.credential);
          if (text.trim().length >= 16) expect(`${error.message} ${error.hint}`).not.toContain(text.trim());
        }
      }),
      { numRuns: runs },
    );
    count('session cookie texts', runs);
  });

  it('keystores: any JSON is a credential error, never a crash', async () => {
    const runs = 150;
    await assertAsyncProperty(
      fc.asyncProperty(fc.oneof(json, fc.record({ version: fc.constant(3), crypto: json })), async (v) => {
        try {
          await decryptKeystore(v, 'pw');
        } catch (error) {
          expect(error).toBeInstanceOf(LoopsignError);
        }
      }),
      { numRuns: runs },
    );
    count('keystores', runs);
  });

  it('service responses: the guards refuse anything malformed with a refusal, never an internal error', () => {
    const ask = normalizeAsk({ ...example, chainId: 8453, walletAddress: TEST_ADDRESS, paymentMode: 'wallet_calls' });
    const resolver = (id: string, v: number) => resultSpecHash(id, v, TEMPLATES.find((t) => t.id === id)!.voteSemantics);
    const ctx = {
      chain: chainForProfile(8453),
      signer: TEST_ADDRESS.toLowerCase() as `0x${string}`,
      ask,
      hashes: computeAskHashes(ask, TEST_ADDRESS, resolver),
      verifyPayload: true,
    };
    const hex = fc.array(fc.constantFrom(...'0123456789abcdef'.split('')), { maxLength: 120 }).map((a) => a.join(''));
    const call = fc.record({
      phase: fc.constantFrom('reserve_submission', 'approve_usdc', 'submit_question', 'x'),
      to: fc.oneof(
        fc.constant('0x1b0219e42e4C72A3eeBad1ef8578444c3523bcB3'),
        hex.map((h) => `0x${h}`),
      ),
      data: fc.oneof(
        fc.constant('0x'),
        hex.map((h) => `0x${h}`),
        fc.constant('0xd6e08b7e' + '00'.repeat(32)),
      ),
      value: fc.oneof(fc.constant('0'), fc.string()),
    });
    const runs = 400;
    assertProperty(
      fc.property(
        fc.oneof(
          json,
          fc.record({
            chainId: fc.constant(8453),
            operationKey: fc.constant(ctx.hashes.operationKey),
            transactionPlan: fc.record({ calls: fc.array(call, { maxLength: 4 }) }),
          }),
        ),
        (resp) => {
          for (const check of [
            () => checkWalletPlan(ctx, resp as Record<string, any>),
            () => checkX402Request(ctx, resp as Record<string, any>, 1_800_000_000),
            () => checkBonusPlan(ctx, (resp as Record<string, any>) ?? {}, '1'),
            () =>
              checkSignedAction((resp as Record<string, any>)?.message ?? resp, {
                action: 'attachments:upload_image',
                wallet: TEST_ADDRESS,
              }),
          ]) {
            try {
              check();
              throw new Error('a random response passed a guard');
            } catch (error) {
              expect(error, String(error)).toBeInstanceOf(LoopsignError);
              expect((error as LoopsignError).exitCode).toBe(ExitCode.refused);
            }
          }
        },
      ),
      { numRuns: runs },
    );
    count('service responses (x4 guards)', runs);
  });

  it('reports how many inputs were tried', () => {
    const total = Object.values(TRIED).reduce((a, b) => a + b, 0);
    capture.count('fuzz inputs tried', 'in-process', total);
    process.stderr.write(
      `fuzzing: ${total} inputs tried (${Object.entries(TRIED)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})\n`,
    );
    expect(total).toBeGreaterThan(2000); // a property whose runs failed records nothing
  });
});
