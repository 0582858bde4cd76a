// Trust anchors of on-chain budgets (issue 38): per chain, MetaMask's DelegationManager, the EIP-7702 DeleGator an
// owner's account points to, and the enforcers of a grant. Base and Base Sepolia: @metamask/delegation-deployments
// (Delegation Framework v1.3.0); the sandbox (31337): its manifest. Nothing here comes from the service.
//
// Code hashes: the sandbox's are pinned (the manifest records the runtime code it deployed and the chain is checked
// against it). Base's cannot be verified from the machine loopsign is built on (the npm bytecode is not byte-identical
// to the deployed code, notes/session-keys.md §2.3), so on 8453 and 84532 the hash seen on first use is recorded in
// loopsign's state folder, shown, and any later change is refused (docs/security.md).
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { keccak256, type Hex, type PublicClient } from 'viem';
import { DELEGATOR_CONTRACTS } from '@metamask/delegation-deployments';
import { ChainError, UsageError } from '../errors.js';
import { writeFileAtomically, ensurePrivateDir } from '../fsutil.js';
import type { Address } from './table.js';
import type { SandboxManifest } from './index.js';

export interface DelegationContracts {
  delegationManager: Address;
  deleGator: Address;
  erc20PeriodTransferEnforcer: Address;
  multiTokenPeriodEnforcer: Address;
  allowedCalldataEnforcer: Address;
  timestampEnforcer: Address;
  nonceEnforcer: Address;
}

export const DELEGATION_CONTRACT_NAMES = [
  'delegationManager',
  'deleGator',
  'erc20PeriodTransferEnforcer',
  'multiTokenPeriodEnforcer',
  'allowedCalldataEnforcer',
  'timestampEnforcer',
  'nonceEnforcer',
] as const satisfies readonly (keyof DelegationContracts)[];

export type DelegationContractName = (typeof DELEGATION_CONTRACT_NAMES)[number];

export interface DelegationAnchors {
  chainId: number;
  contracts: DelegationContracts;
  /** Pinned runtime code hashes by contract; absent ones are recorded on first use. */
  pinnedCodeHashes: Partial<Record<DelegationContractName, Hex>>;
  source: string;
}

/** The framework release whose deployments are trusted. */
export const DELEGATION_FRAMEWORK_VERSION = '1.3.0';

function fromDeployments(chainId: 8453 | 84532): DelegationAnchors {
  const d = (DELEGATOR_CONTRACTS as Record<string, Record<string, Record<string, string>>>)[DELEGATION_FRAMEWORK_VERSION]![
    String(chainId)
  ]!;
  const a = (name: string) => d[name] as Address;
  return {
    chainId,
    contracts: {
      delegationManager: a('DelegationManager'),
      deleGator: a('EIP7702StatelessDeleGatorImpl'),
      erc20PeriodTransferEnforcer: a('ERC20PeriodTransferEnforcer'),
      multiTokenPeriodEnforcer: a('MultiTokenPeriodEnforcer'),
      allowedCalldataEnforcer: a('AllowedCalldataEnforcer'),
      timestampEnforcer: a('TimestampEnforcer'),
      nonceEnforcer: a('NonceEnforcer'),
    },
    pinnedCodeHashes: {},
    source: `@metamask/delegation-deployments (Delegation Framework v${DELEGATION_FRAMEWORK_VERSION})`,
  };
}

/**
 * The anchors for a chain: built in for Base and Base Sepolia, from the running sandbox's manifest for 31337.
 * Refuses (exit 2) where none are known.
 */
export function delegationAnchors(chainId: number, manifest?: SandboxManifest): DelegationAnchors {
  if (chainId === 8453 || chainId === 84532) return fromDeployments(chainId);
  if (chainId === 31337 && manifest?.delegation) {
    const m = manifest.delegation;
    const contracts = m.contracts as DelegationContracts;
    const pinnedCodeHashes: Partial<Record<DelegationContractName, Hex>> = {};
    for (const name of DELEGATION_CONTRACT_NAMES) {
      const hash = m.codeHashes[contracts[name].toLowerCase()];
      if (hash) pinnedCodeHashes[name] = hash as Hex;
    }
    return { chainId, contracts, pinnedCodeHashes, source: 'sandbox manifest' };
  }
  throw new UsageError('budget_unsupported_chain', `no trusted delegation contracts are known on chain ${chainId}`, {
    hint:
      chainId === 31337
        ? 'restart `loopsign sandbox` (this version deploys MetaMask’s delegation contracts and names them in its manifest)'
        : 'on-chain budgets work on Base (8453), Base Sepolia (84532) and the sandbox (31337)',
  });
}

/** Whether the chain pins budget contracts: Base, Base Sepolia, and a sandbox whose manifest names them. */
export function hasDelegationAnchors(chainId: number, manifest?: SandboxManifest): boolean {
  return chainId === 8453 || chainId === 84532 || (chainId === 31337 && manifest?.delegation !== undefined);
}

export interface CheckedCode {
  name: DelegationContractName;
  address: Address;
  codeHash: Hex;
  /** pinned: matched the built-in/manifest hash; first-use: recorded now; recorded: matched an earlier first use. */
  trust: 'pinned' | 'first-use' | 'recorded';
}

/** Where first-use code hashes are kept: one JSON file in loopsign's state folder. */
export function codeHashFile(stateDir: string): string {
  return path.join(stateDir, 'delegation-code-hashes.json');
}

async function readRecorded(file: string): Promise<Record<string, string>> {
  try {
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
  }
  throw new UsageError('budget_code_hashes_unreadable', `the recorded delegation code hashes in ${file} cannot be read`, {
    hint: 'restore the file from a backup; deleting it makes loopsign trust whatever code is there now on next use',
  });
}

/**
 * Checks that every anchor has code and that its hash is the pinned one (or the one recorded at first use, which is
 * recorded now when none is). A contract with no code, or with other code, is refused (exit 4): nothing is signed
 * against it.
 */
export async function checkDelegationCode(
  client: PublicClient,
  anchors: DelegationAnchors,
  stateDir: string,
  names: readonly DelegationContractName[] = DELEGATION_CONTRACT_NAMES,
): Promise<CheckedCode[]> {
  const file = codeHashFile(stateDir);
  const recorded = await readRecorded(file);
  let changed = false;
  const out: CheckedCode[] = [];
  for (const name of names) {
    const address = anchors.contracts[name];
    const code = await client.getCode({ address });
    if (!code || code === '0x') {
      throw new ChainError('budget_contract_missing', `${name} has no code at ${address} on chain ${anchors.chainId}`, {
        hint: 'check --rpc-url: the node must be of the chain whose contracts loopsign pins',
        details: { contract: name, address },
      });
    }
    const codeHash = keccak256(code);
    const pinned = anchors.pinnedCodeHashes[name];
    const key = `${anchors.chainId}:${address.toLowerCase()}`;
    if (pinned) {
      if (pinned.toLowerCase() !== codeHash.toLowerCase()) throw mismatch(name, address, pinned, codeHash, 'pinned');
      out.push({ name, address, codeHash, trust: 'pinned' });
    } else if (recorded[key]) {
      if (recorded[key]!.toLowerCase() !== codeHash.toLowerCase())
        throw mismatch(name, address, recorded[key] as Hex, codeHash, 'recorded');
      out.push({ name, address, codeHash, trust: 'recorded' });
    } else {
      recorded[key] = codeHash;
      changed = true;
      out.push({ name, address, codeHash, trust: 'first-use' });
    }
  }
  if (changed) {
    await ensurePrivateDir(path.dirname(file));
    await writeFileAtomically(file, JSON.stringify(recorded, null, 2) + '\n');
  }
  return out;
}

function mismatch(name: string, address: Address, expected: Hex, actual: Hex, how: 'pinned' | 'recorded'): ChainError {
  return new ChainError(
    'budget_code_changed',
    `${name} at ${address} runs other code than the ${how} one (code hash ${actual}, expected ${expected}); loopsign will not sign against it`,
    {
      hint:
        how === 'pinned'
          ? 'check --rpc-url and the sandbox manifest'
          : 'the contract changed since loopsign first used it: find out why before trusting it',
      details: { contract: name, address, expected, actual },
    },
  );
}

/**
 * The configured chain's pinned DeleGator as a trusted batch delegate of the executor (issue 38: an owner's account on
 * it keeps running atomic plans), with its code checked like every anchor's; undefined where the chain pins none.
 */
export function trustedDeleGator(
  client: PublicClient,
  chainId: number,
  manifest: SandboxManifest | undefined,
  stateDir: string,
): { address: Address; verify(): Promise<void> } | undefined {
  if (!hasDelegationAnchors(chainId, manifest)) return undefined;
  const anchors = delegationAnchors(chainId, manifest);
  return {
    address: anchors.contracts.deleGator,
    verify: async () => {
      await checkDelegationCode(client, anchors, stateDir, ['deleGator']);
    },
  };
}
