// Where loopsign keeps its files, following the XDG base directories (env-paths reads XDG_* on every call).
import path from 'node:path';
import { homedir } from 'node:os';
import envPaths from 'env-paths';
import { UsageError } from './errors.js';

export interface LoopsignPaths {
  config: string;
  data: string;
  state: string;
}

export function loopsignPaths(): LoopsignPaths {
  const p = envPaths('loopsign', { suffix: '' });
  return { config: p.config, data: p.data, state: p.log };
}

export function defaultConfigFile(): string {
  return process.env.LOOPSIGN_CONFIG ?? path.join(loopsignPaths().config, 'config.json');
}

export function defaultKeystorePath(): string {
  return path.join(loopsignPaths().data, 'keystore.json');
}

export function journalDir(): string {
  return path.join(loopsignPaths().state, 'journal');
}

/** Confidentiality terms texts the user was shown (rate on gated content), 0600 files. */
export function termsDir(): string {
  return path.join(loopsignPaths().state, 'terms');
}

export function defaultSandboxDir(): string {
  return path.join(loopsignPaths().state, 'sandbox');
}

/**
 * `~` and `~/…` become the home directory: a path from the config file or the environment reaches loopsign
 * unexpanded (no shell in between), and taken literally it would create a folder named `~` here. `~user/…` is
 * refused rather than guessed.
 */
export function expandHome(file: string, where: string): string {
  if (file === '~') return homedir();
  if (file.startsWith('~/')) return path.join(homedir(), file.slice(2));
  if (file.startsWith('~')) {
    throw new UsageError('invalid_path', `${where}: "${file}" starts with ~user, which loopsign does not expand`, {
      hint: 'write the full path, or ~/… for your own home directory',
    });
  }
  return file;
}
