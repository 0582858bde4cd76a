// A budget pull's calldata read back (issue 38): DelegationManager.redeemDelegations with one permission context, the
// single-call default mode, and one execution `token.transfer(recipient, amount)` with no value. viem only (the spend
// ledger classifies every signed call with it; MetaMask's codecs load only where a pull is planned).
import { decodeAbiParameters, decodeFunctionData, parseAbi, sliceHex, hexToBigInt, type Hex } from 'viem';

export const REDEEM_ABI = parseAbi([
  'function redeemDelegations(bytes[] _permissionContexts, bytes32[] _modes, bytes[] _executionCallDatas)',
]);
const TRANSFER = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

// The permission context as the DelegationManager decodes it: abi.decode(context, (Delegation[])).
export const DELEGATION_CHAIN = [
  {
    type: 'tuple[]',
    components: [
      { name: 'delegate', type: 'address' },
      { name: 'delegator', type: 'address' },
      { name: 'authority', type: 'bytes32' },
      { name: 'caveats', type: 'tuple[]', components: [{ type: 'address' }, { type: 'bytes' }, { type: 'bytes' }] },
      { name: 'salt', type: 'uint256' },
      { name: 'signature', type: 'bytes' },
    ],
  },
] as const;

/** The number of delegations a permission context carries, or undefined when it is not one the manager can decode. */
function chainLength(context: Hex): number | undefined {
  try {
    return decodeAbiParameters(DELEGATION_CHAIN, context)[0].length;
  } catch {
    return undefined;
  }
}

/** ERC-7579 mode: single call, revert on failure (the only mode the period enforcers accept). */
const SINGLE_DEFAULT: Hex = `0x${'00'.repeat(32)}`;

export interface DecodedPull {
  /** The one permission context (the encoded delegation chain). */
  context: Hex;
  token: Hex;
  recipient: Hex;
  amount: bigint;
}

/** The pull a redeemDelegations call makes, or undefined when it is anything else (another mode, batch, value, call). */
export function decodePullCall(data: Hex): DecodedPull | undefined {
  let d: { functionName: string; args: readonly unknown[] };
  try {
    d = decodeFunctionData({ abi: REDEEM_ABI, data }) as never;
  } catch {
    return undefined;
  }
  const [contexts, modes, executions] = d.args as [readonly Hex[], readonly Hex[], readonly Hex[]];
  if (contexts.length !== 1 || modes.length !== 1 || executions.length !== 1) return undefined;
  if (modes[0]!.toLowerCase() !== SINGLE_DEFAULT) return undefined;
  // A context of no delegation is the manager's *self-authorized* execution (executeFromExecutor on the caller's own
  // DeleGator): from an owner's account it moves the owner's tokens anywhere. No grant is redeemed: not a pull.
  const links = chainLength(contexts[0]!);
  if (links === undefined || links === 0) return undefined;
  // ERC-7579 single execution: target (20 bytes) ‖ value (32 bytes) ‖ calldata.
  const execution = executions[0]!;
  if ((execution.length - 2) / 2 < 52) return undefined;
  const token = sliceHex(execution, 0, 20);
  if (hexToBigInt(sliceHex(execution, 20, 52)) !== 0n) return undefined;
  let transfer: { functionName: string; args: readonly unknown[] };
  try {
    transfer = decodeFunctionData({ abi: TRANSFER, data: sliceHex(execution, 52) }) as never;
  } catch {
    return undefined;
  }
  const [recipient, amount] = transfer.args as [Hex, bigint];
  return { context: contexts[0]!, token, recipient, amount };
}
