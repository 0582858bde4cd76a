// MetaMask's Delegation Framework (v1.3.0 sources, as compiled in @metamask/delegation-abis 2.0.0) on the sandbox's
// anvil: the DelegationManager, the EIP-7702 DeleGator an owner's account points to, and the enforcers a budget grant
// uses (issue 38). Deployed through anvil's CREATE2 deployer with MetaMask's own salt, so each address depends on the
// bytecode alone: the same on every start. These are not Base's addresses (the npm bytecode differs from what was
// deployed there); the manifest carries them with their runtime code hashes, and loopsign pins them for 31337.
import { concat, encodeAbiParameters, getContractAddress, keccak256, stringToHex, type Hex } from 'viem';
import {
  AllowedCalldataEnforcer,
  DelegationManager,
  EIP7702StatelessDeleGator,
  ERC20PeriodTransferEnforcer,
  EntryPoint,
  MultiTokenPeriodEnforcer,
  NonceEnforcer,
  TimestampEnforcer,
} from '@metamask/delegation-abis/bytecode';
import type { Address } from '../chains/table.js';
import type { DelegationContracts } from '../chains/delegation.js';
import type { SandboxChain } from './chain.js';

/** anvil's preinstalled deterministic deployer (Arachnid's), present unless started with --disable-default-create2-deployer. */
export const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
/** MetaMask's deployment scripts use bytes32("GATOR"). */
export const GATOR_SALT: Hex = stringToHex('GATOR', { size: 32 });

/** Creation code and constructor arguments of every contract, in deployment order (the DeleGator needs the first two). */
function initCodes(owner: Address): { name: keyof DelegationContracts | 'entryPoint'; code: Hex }[] {
  const entryPoint = create2Address(EntryPoint as Hex);
  const managerCode = concat([DelegationManager as Hex, encodeAbiParameters([{ type: 'address' }], [owner])]);
  const delegationManager = create2Address(managerCode);
  return [
    { name: 'entryPoint', code: EntryPoint as Hex },
    { name: 'delegationManager', code: managerCode },
    {
      name: 'deleGator',
      code: concat([
        EIP7702StatelessDeleGator as Hex,
        encodeAbiParameters([{ type: 'address' }, { type: 'address' }], [delegationManager, entryPoint]),
      ]),
    },
    { name: 'erc20PeriodTransferEnforcer', code: ERC20PeriodTransferEnforcer as Hex },
    { name: 'multiTokenPeriodEnforcer', code: MultiTokenPeriodEnforcer as Hex },
    { name: 'allowedCalldataEnforcer', code: AllowedCalldataEnforcer as Hex },
    { name: 'timestampEnforcer', code: TimestampEnforcer as Hex },
    { name: 'nonceEnforcer', code: NonceEnforcer as Hex },
  ];
}

function create2Address(code: Hex): Address {
  return getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: GATOR_SALT, bytecode: code }) as Address;
}

export interface SandboxDelegation {
  entryPoint: Address;
  contracts: DelegationContracts;
  /** keccak256 of each contract's runtime code as deployed, by address (lower case). */
  codeHashes: Record<string, Hex>;
}

/**
 * Deploys the set. The transactions go out back to back at consecutive nonces and are awaited together (anvil mines
 * each at once), so the sandbox's start grows by about one round of receipts rather than eight.
 */
export async function deployDelegationFramework(chain: SandboxChain): Promise<SandboxDelegation> {
  const d = chain.deployer;
  const codes = initCodes(d.address as Address);
  const wallet = chain.wallet(d);
  let nonce = await chain.publicClient.getTransactionCount({ address: d.address, blockTag: 'pending' });
  const hashes: Hex[] = [];
  for (const { code } of codes) {
    hashes.push(
      await wallet.sendTransaction({
        account: d,
        chain: null,
        to: CREATE2_DEPLOYER,
        data: concat([GATOR_SALT, code]),
        // Well above the largest (the EntryPoint, about 3.3 M): no estimate round trip per contract.
        gas: 6_000_000n,
        nonce: nonce++,
      }),
    );
  }
  for (const hash of hashes) {
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success') throw new Error(`deploying MetaMask's delegation contracts failed (${hash})`);
  }
  const out: Record<string, Address> = {};
  const codeHashes: Record<string, Hex> = {};
  for (const { name, code } of codes) {
    const address = create2Address(code);
    const runtime = await chain.publicClient.getCode({ address });
    if (!runtime || runtime === '0x') throw new Error(`${name} has no code at ${address} after its deployment`);
    out[name] = address;
    codeHashes[address.toLowerCase()] = keccak256(runtime);
  }
  const { entryPoint, ...contracts } = out;
  return { entryPoint: entryPoint!, contracts: contracts as unknown as DelegationContracts, codeHashes };
}
