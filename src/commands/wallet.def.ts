// loopsign wallet new | import | address | export | balance | rekey: definitions (handlers in wallet.ts).
import type { Command } from 'commander';
import { examples, type Lazy } from './define.js';

export interface WalletNewOptions {
  force?: boolean;
}

export interface WalletImportOptions {
  privateKeyFile?: string;
  keystoreFile?: string;
  force?: boolean;
}

export interface WalletExportOptions {
  out: string;
  force?: boolean;
}

export interface WalletBalanceOptions {
  address?: string;
}

export interface WalletRekeyOptions {
  newPasswordFile?: string;
  newPasswordEnv?: string;
}

export function defineWallet(program: Command, lazy: Lazy): void {
  const wallet = program.command('wallet').description('create, import, show and back up the encrypted local wallet');
  // (createOption rather than `new Option`: a definition imports commander's types only; cli.ts loads commander.)
  wallet
    .command('new')
    .description('create a new key and write it as an encrypted v3 keystore')
    .option('--force', 'replace an existing keystore')
    .addHelpText(
      'after',
      examples(['LOOPSIGN_PASSWORD=... loopsign wallet new', 'loopsign wallet new --password-file pass.txt --keystore ./agent.json']),
    )
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletNew,
      ),
    );
  wallet
    .command('import')
    .description('import a private key (from stdin or a file, never argv) or an existing keystore file')
    .addOption(wallet.createOption('--private-key-file <file>', 'read the private key from this file').conflicts('keystoreFile'))
    .option('--keystore-file <file>', 'import an existing v3 keystore (geth, cast, ethers); unlocked with the password, re-encrypted')
    .option('--force', 'replace an existing keystore')
    .addHelpText(
      'after',
      examples([
        'printf %s "$KEY" | loopsign wallet import --password-file pass.txt',
        'loopsign wallet import --keystore-file ~/.foundry/keystores/agent',
      ]),
    )
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletImport,
      ),
    );
  wallet
    .command('address')
    .description('print the wallet address')
    .addHelpText('after', examples(['loopsign wallet address', 'loopsign --json wallet address']))
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletAddress,
      ),
    );
  wallet
    .command('export')
    .description('write a copy of the encrypted keystore (still encrypted) to a file')
    .requiredOption('--out <file>', 'where to write the copy')
    .option('--force', 'replace an existing file')
    .addHelpText('after', examples(['loopsign wallet export --out backup-keystore.json']))
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletExport,
      ),
    );
  wallet
    .command('balance')
    .description('show the ETH, USDC and LREP balances of the wallet on the configured chain')
    .option('--address <address>', 'show another address instead of the wallet (no unlock needed)')
    .addHelpText('after', examples(['loopsign wallet balance --chain-id 31337']))
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletBalance,
      ),
    );
  wallet
    .command('rekey')
    .description('re-encrypt the keystore in place at scrypt n=2^18 (a weak one is unlocked for this), under the same or a new password')
    .addOption(
      wallet
        .createOption('--new-password-file <file>', 'read the new password from this file (default: keep the password)')
        .conflicts('newPasswordEnv'),
    )
    .option('--new-password-env <name>', 'read the new password from this environment variable (default: keep the password)')
    .addHelpText(
      'after',
      examples([
        'loopsign wallet rekey --password-file old-pass.txt',
        'loopsign wallet rekey --password-file old-pass.txt --new-password-file new-pass.txt',
      ]),
    )
    .action(
      lazy(
        () => import('./wallet.js'),
        (m) => m.walletRekey,
      ),
    );
}
