// Where a keystore password may come from: a file, an environment variable named by --password-env, or a hidden
// prompt when stdin is a TTY. Never from an argv value: argv is visible to every process on the machine.
import { promises as fs } from 'node:fs';
import { CredentialError } from '../errors.js';
import type { ResolvedConfig } from '../config.js';
import type { Env } from '../env.js';

export interface PasswordRequest {
  /** Ask twice and compare (new keystores). */
  confirm?: boolean;
  /** For the prompt text. */
  purpose: string;
}

export async function readPasswordFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CredentialError(
      'password_file_unreadable',
      code === 'ENOENT' ? `password file ${file} does not exist` : `cannot read password file ${file} (${code ?? 'error'})`,
      code === 'ENOENT'
        ? {
            hint: `create it readable by you alone, e.g. for a new wallet: (umask 077 && head -c 24 /dev/urandom | base64 > ${file}); for an existing keystore put its password in it the same way`,
          }
        : undefined,
    );
  }
  // One trailing newline is an artefact of `echo ... > file`, not part of the password.
  const password = text.replace(/\r?\n$/, '');
  if (password.length === 0) throw new CredentialError('password_empty', `password file ${file} is empty`);
  return password;
}

/** The password from the config's file, else the variable it names in the run's environment `env`, else a prompt. */
export async function obtainPassword(config: ResolvedConfig, env: Env, request: PasswordRequest): Promise<string> {
  const file = config.passwordFile.value;
  if (file !== undefined) return readPasswordFile(file);

  const envName = config.passwordEnv.value;
  const fromEnv = env[envName];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;

  if (process.stdin.isTTY === true && process.stderr.isTTY === true) {
    const { password } = await import('@inquirer/prompts');
    const first = await password({ message: `Password for ${request.purpose}:`, mask: false }, { output: process.stderr });
    if (first.length === 0) throw new CredentialError('password_empty', 'an empty password is not allowed');
    if (request.confirm) {
      const second = await password({ message: 'Repeat the password:', mask: false }, { output: process.stderr });
      if (second !== first) throw new CredentialError('password_mismatch', 'the two passwords differ; nothing was written');
    }
    return first;
  }

  throw new CredentialError('password_required', `no password for ${request.purpose}`, {
    hint: `give --password-file FILE, or set ${envName} (or name another variable with --password-env), or run on a terminal to be prompted`,
  });
}
