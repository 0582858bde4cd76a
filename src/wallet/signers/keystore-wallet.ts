// The keystore (or LOOPSIGN_PRIVATE_KEY) source: the only one that ever sees key bytes. It wraps startUnlock
// unchanged, so the checks, warnings and password prompt come first and scrypt then overlaps the caller's other
// work: `account` resolves when the key is derived. The bytes are zeroed once the viem account is built (viem keeps
// its own copy inside the account; loopsign keeps none).
import { bytesToHex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CredentialError } from '../../errors.js';
import { sameAddress } from '../../hex.js';
import type { ResolvedConfig } from '../../config.js';
import type { Output } from '../../output.js';
import type { Env } from '../../env.js';
import { startUnlock } from '../unlock.js';
import type { Address, SignerSource, Wallet } from './types.js';

const ALL = { transaction: true, typedData: true, message: true, authorization: true } as const;

function mismatch(address: string, from: Address, what: string): CredentialError {
  return new CredentialError('signer_address_mismatch', `${what} holds ${address}, not --from ${from}; nothing was signed or sent`, {
    hint: 'drop --from, or point --keystore at the keystore of that address',
  });
}

export async function openKeystoreWallet(
  config: ResolvedConfig,
  out: Output,
  env: Env,
  source: Extract<SignerSource, { kind: 'keystore' | 'env' }>,
  from?: Address,
  // The unlock itself; a test passes one that records the key it hands out, to see what the wallet leaves of it.
  unlock: typeof startUnlock = startUnlock,
): Promise<Wallet> {
  const what = source.kind === 'env' ? 'LOOPSIGN_PRIVATE_KEY' : `keystore ${config.keystore.value}`;
  // A --from the keystore's address field (or the raw key) does not match is refused inside the unlock, before the
  // password and scrypt; a keystore without the field is checked once unlocked, below.
  const unlocking = await unlock(config, out, env, (address) => {
    if (from && !sameAddress(address, from)) throw mismatch(address, from, what);
  });
  const account: Promise<LocalAccount> = unlocking.signer.then((signer) => {
    try {
      const built = privateKeyToAccount(bytesToHex(signer.privateKey));
      if (from && !sameAddress(built.address, from)) throw mismatch(built.address, from, what);
      return built;
    } finally {
      signer.privateKey.fill(0);
    }
  });
  account.catch(() => undefined); // awaited by the caller to sign; a wrong password must not be an unhandled rejection meanwhile
  // A keystore without an address field (rare: loopsign, geth and cast write one) is known only once unlocked.
  const address = (unlocking.address ?? (await account).address) as Address;
  return { address, source, account, capabilities: { ...ALL }, close: async () => undefined };
}
