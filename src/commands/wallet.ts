// loopsign wallet new | import | address | export | balance
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Context } from '../context.js';
import { CredentialError, UsageError } from '../errors.js';
import { createFileAtomically, writeFileAtomically } from '../fsutil.js';
import {
  addressOfPrivateKey,
  claimedAddress,
  decryptKeystore,
  encryptKeystore,
  generatePrivateKey,
  kdfLabel,
  parseKeystore,
  parsePrivateKey,
} from '../wallet/keystore.js';
import { obtainPassword } from '../wallet/password.js';
import { readKeystoreFile, saveKeystore } from '../wallet/unlock.js';
import { readSecretInput } from '../wallet/secret-input.js';
import { rekeyWallet } from '../wallet/rekey.js';
import type { WalletBalanceOptions, WalletExportOptions, WalletImportOptions, WalletNewOptions, WalletRekeyOptions } from './wallet.def.js';
import { checkAddress } from '../address.js';

/**
 * A keystore is never replaced without --force: refused before any password is asked for and any key derivation
 * (seconds) runs. saveKeystore still refuses one that appears meanwhile.
 */
async function refuseExisting(file: string, force: boolean): Promise<void> {
  if (
    force ||
    !(await fs.lstat(file).then(
      () => true,
      () => false,
    ))
  )
    return;
  throw new CredentialError('keystore_exists', `a keystore already exists at ${file}; it was not changed`, {
    hint: 'pass --force to replace it (back it up first with `loopsign wallet export --out FILE`), or choose another --keystore',
  });
}

async function writeNew(ctx: Context, privateKey: Uint8Array, force: boolean, how: string): Promise<void> {
  const config = await ctx.config();
  const file = config.keystore.value;
  await refuseExisting(file, force);
  const password = await obtainPassword(config, ctx.env, { purpose: `the new keystore ${file}`, confirm: true });
  ctx.out.progress('keystore.encrypt', 'encrypting the key (scrypt n=2^18)');
  const keystore = await encryptKeystore(privateKey, password);
  await saveKeystore(file, keystore, force);
  const address = addressOfPrivateKey(privateKey);
  ctx.out.result({ address, keystore: file, created: how }, () => `${how} wallet ${address}\nkeystore: ${file} (mode 0600)`);
}

export async function walletNew(ctx: Context, options: WalletNewOptions): Promise<void> {
  await writeNew(ctx, generatePrivateKey(), options.force === true, 'created');
}

export async function walletImport(ctx: Context, options: WalletImportOptions): Promise<void> {
  const force = options.force === true;
  if (typeof options.keystoreFile === 'string') {
    const source = options.keystoreFile;
    const json = await readKeystoreFile(source);
    parseKeystore(json);
    const config = await ctx.config();
    await refuseExisting(config.keystore.value, force);
    const password = await obtainPassword(config, ctx.env, { purpose: `the keystore ${source}` });
    ctx.out.progress('keystore.decrypt', `unlocking ${source}`);
    // A weak KDF is fine here: the key is re-encrypted with loopsign's parameters (n=2^18, address and id present)
    // under the same password.
    const { privateKey } = await decryptKeystore(json, password, { allowWeakKdf: true });
    const keystore = await encryptKeystore(privateKey, password);
    await saveKeystore(config.keystore.value, keystore, force);
    const address = addressOfPrivateKey(privateKey);
    ctx.out.result(
      { address, keystore: config.keystore.value, importedFrom: source },
      () => `imported wallet ${address}\nkeystore: ${config.keystore.value}`,
    );
    return;
  }
  const text = await readSecretInput(typeof options.privateKeyFile === 'string' ? options.privateKeyFile : undefined, 'private key');
  await writeNew(ctx, parsePrivateKey(text), force, 'imported');
}

export async function walletAddress(ctx: Context): Promise<void> {
  const doc = await walletAddressDocument(ctx);
  ctx.out.result(doc, () => doc.address);
}

/** The document `wallet address --json` prints (and `loopsign_wallet_address` returns). */
export async function walletAddressDocument(ctx: Context): Promise<{ address: string; signer: string; keystore: string | null }> {
  const config = await ctx.config();
  // The keystore's own address field, --from for an external signer (cast keystores carry none: then it is unlocked).
  const address = await ctx.walletAddress();
  const { describeSource } = await import('../wallet/signers/types.js');
  return {
    address,
    signer: describeSource(config.signer.source),
    keystore: config.signer.source.kind === 'keystore' ? config.keystore.value : null,
  };
}

export async function walletExport(ctx: Context, options: WalletExportOptions): Promise<void> {
  const config = await ctx.config();
  const target = path.resolve(String(options.out));
  if (target === path.resolve(config.keystore.value))
    throw new UsageError('same_file', '--out is the keystore itself; choose another file');
  const json = await readKeystoreFile(config.keystore.value);
  parseKeystore(json);
  const text = JSON.stringify(json, null, 2) + '\n';
  // The user's own folder: create it if missing, but never change the mode of an existing one.
  await fs.mkdir(path.dirname(target), { recursive: true });
  if (options.force === true) {
    await writeFileAtomically(target, text);
  } else {
    try {
      await createFileAtomically(target, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new UsageError('file_exists', `${target} already exists; it was not changed`, { hint: 'pass --force to replace it' });
      }
      throw error;
    }
  }
  ctx.out.result(
    { exported: target, address: claimedAddress(json) ?? null },
    () => `wrote an encrypted copy of the keystore to ${target} (mode 0600)`,
  );
}

export async function walletBalance(ctx: Context, options: WalletBalanceOptions): Promise<void> {
  const { doc, resolved } = await walletBalanceDocument(ctx, typeof options.address === 'string' ? options.address : undefined);
  const { address, balances } = doc;
  ctx.out.result(doc, () =>
    [
      `wallet ${address} on ${resolved.chain.name} (${resolved.chain.chainId})`,
      ...balances.map(
        (b) =>
          `  ${b.symbol.padEnd(5)} ${b.formatted ?? 'not configured on this chain'}${b.tokenAddress ? `  (token ${b.tokenAddress})` : ''}`,
      ),
    ].join('\n'),
  );
}

/** The balances of the wallet, or of `other`, and the document `wallet balance --json` prints (and `loopsign_wallet_balance` returns). */
export async function walletBalanceDocument(ctx: Context, other?: string) {
  const { readBalances } = await import('../wallet/balances.js');
  const address = other !== undefined ? checkAddress(other, '--address') : await ctx.walletAddress();
  const { settings: resolved, client } = await ctx.chain();
  const balances = await readBalances(resolved, client, address);
  return { doc: { address, chainId: resolved.chain.chainId, balances }, resolved };
}

export async function walletRekey(ctx: Context, options: WalletRekeyOptions): Promise<void> {
  const config = await ctx.config();
  ctx.out.progress('keystore.rekey', 'unlocking the keystore and re-encrypting it (scrypt n=2^18)');
  const r = await rekeyWallet(config, ctx.env, { newPasswordFile: options.newPasswordFile, newPasswordEnv: options.newPasswordEnv });
  ctx.out.result(
    { ...r },
    () => `re-encrypted wallet ${r.address}
keystore: ${r.keystore} (was ${kdfLabel(r.before)}, now ${kdfLabel(r.after)}${r.passwordChanged ? ', new password' : ', same password'})`,
  );
}
