// The sandbox's contracts offer only what RateLoop's real contracts offer to read (issue 37; notes/real-contract-
// rules.md): the keeper, the sandbox service and loopsign read state through the live views, with the live signatures
// (RateLoop 0b442ae), and no `sandbox*` view exists for anything to depend on. A read that works on the sandbox then
// works on the real chain.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toFunctionSignature, type AbiFunction } from 'viem';
import * as A from '../src/sandbox/contracts/artifacts.js';

const functions = (abi: readonly unknown[]) => (abi as AbiFunction[]).filter((x) => x.type === 'function');
const signatures = (abi: readonly unknown[]) => functions(abi).map((f) => toFunctionSignature(f));
const outputs = (abi: readonly unknown[], name: string) =>
  functions(abi)
    .find((f) => f.name === name)
    ?.outputs.map((o) => o.type);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe("the sandbox's contracts have the live views, and no sandbox-only one", () => {
  const contracts = Object.entries(A).filter(([, v]) => typeof v === 'object' && v !== null && 'abi' in v) as [
    string,
    { abi: unknown[] },
  ][];

  it('no contract has a view named sandbox…', () => {
    const sandboxOnly = contracts.flatMap(([name, c]) =>
      functions(c.abi)
        .filter((f) => /^sandbox/i.test(f.name))
        .map((f) => `${name}.${f.name}`),
    );
    expect(sandboxOnly).toEqual([]);
  });

  it('the views the keeper and the service read exist with their live signatures and outputs', () => {
    expect(signatures(A.ContentRegistry.abi)).toEqual(
      expect.arrayContaining([
        'contents(uint256)',
        'getSubmitterIdentity(uint256)',
        'protocolConfig()',
        'confidentialityConfig(uint256)',
        'isContentActive(uint256)',
      ]),
    );
    expect(outputs(A.ContentRegistry.abi, 'contents')).toEqual([
      'uint64',
      'bytes32',
      'address',
      'uint48',
      'uint48',
      'uint8',
      'uint8',
      'address',
      'uint8',
      'uint64',
    ]);
    expect(signatures(A.RoundVotingEngine.abi)).toEqual(
      expect.arrayContaining([
        'commitCore(uint256,uint256,bytes32)',
        'commitRevealData(uint256,uint256,bytes32)',
        'getRoundCommitKey(uint256,uint256,uint256)',
        'voterCommitKey(uint256,uint256,address)',
        'rbtsCommitState(uint256,uint256,bytes32)',
      ]),
    );
    expect(outputs(A.RoundVotingEngine.abi, 'commitRevealData')).toEqual(['bytes32', 'uint64', 'bytes32', 'uint48', 'bool', 'uint64']);
    expect(signatures(A.ProtocolConfig.abi)).toEqual(
      expect.arrayContaining([
        'validateRoundConfig(uint256,uint256,uint256,uint256)',
        'roundConfigBounds()',
        'config()',
        'minSubmissionUsdcPool()',
      ]),
    );
  });

  it("voters' credentials: a rater registry with the live seeding call and view, named by ProtocolConfig; no flag on the engine", () => {
    expect(signatures(A.RaterRegistry.abi)).toEqual(
      expect.arrayContaining([
        'seedHumanCredential(address,uint64,bytes32,bytes32)',
        'hasActiveHumanCredential(address)',
        'getHumanCredential(address)',
        'revokeHumanCredential(address)',
      ]),
    );
    expect(signatures(A.ProtocolConfig.abi)).toContain('raterRegistry()');
    expect(functions(A.RoundVotingEngine.abi).filter((f) => /humanCredential/i.test(f.name))).toEqual([]);
  });

  it('nothing in src calls a sandbox-only view (loopsign outside src/sandbox included)', () => {
    const root = path.join(import.meta.dirname, '..', 'src');
    const calls = files(root)
      .filter((f) => !f.endsWith(path.join('contracts', 'artifacts.ts')))
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/['"`](sandbox(?:Content|Round|Commit)[A-Za-z]*|setHumanCredential)['"`]/g)].map(
          (m) => `${path.relative(root, f)}: ${m[1]}`,
        ),
      );
    expect(calls).toEqual([]);
  });
});
