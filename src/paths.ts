// Where loopsign keeps its files, following the XDG base directories — read from the run's environment (src/env.ts),
// never the process's, so a test's context names its own folders. The layout is env-paths 4's for the name
// "loopsign" with no suffix (what loopsign used before): XDG on Linux and others, ~/Library on macOS, %APPDATA% and
// %LOCALAPPDATA% on Windows.
import path from 'node:path';
import { homedir } from 'node:os';
import { UsageError } from './errors.js';
import type { Env } from './env.js';

export interface LoopsignPaths {
  config: string;
  data: string;
  state: string;
}

const NAME = 'loopsign';

export function loopsignPaths(env: Env): LoopsignPaths {
  const home = homedir();
  if (process.platform === 'darwin') {
    const library = path.join(home, 'Library');
    return {
      config: path.join(library, 'Preferences', NAME),
      data: path.join(library, 'Application Support', NAME),
      state: path.join(library, 'Logs', NAME),
    };
  }
  if (process.platform === 'win32') {
    const appData = env.APPDATA || path.join(home, 'AppData', 'Roaming');
    const localAppData = env.LOCALAPPDATA || path.join(home, 'AppData', 'Local');
    return {
      config: path.join(appData, NAME, 'Config'),
      data: path.join(localAppData, NAME, 'Data'),
      state: path.join(localAppData, NAME, 'Log'),
    };
  }
  return {
    config: path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), NAME),
    data: path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), NAME),
    state: path.join(env.XDG_STATE_HOME || path.join(home, '.local', 'state'), NAME),
  };
}

/** The config file when LOOPSIGN_CONFIG does not name one. */
export function defaultConfigFile(paths: LoopsignPaths): string {
  return path.join(paths.config, 'config.json');
}

export function defaultKeystorePath(paths: LoopsignPaths): string {
  return path.join(paths.data, 'keystore.json');
}

export function journalDir(paths: LoopsignPaths): string {
  return path.join(paths.state, 'journal');
}

/** Confidentiality terms texts the user was shown (rate on gated content), 0600 files. */
export function termsDir(paths: LoopsignPaths): string {
  return path.join(paths.state, 'terms');
}

export function defaultSandboxDir(paths: LoopsignPaths): string {
  return path.join(paths.state, 'sandbox');
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
