// Secrets given to loopsign come from a file, piped stdin, or a hidden prompt — never from argv.
import { promises as fs } from 'node:fs';
import { CredentialError } from '../errors.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readSecretInput(file: string | undefined, what: string): Promise<string> {
  if (file !== undefined) {
    try {
      return await fs.readFile(file, 'utf8');
    } catch (error) {
      throw new CredentialError(
        'secret_file_unreadable',
        `cannot read the ${what} file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (process.stdin.isTTY === true) {
    const { password } = await import('@inquirer/prompts');
    return password({ message: `Paste the ${what}:`, mask: false }, { output: process.stderr });
  }
  const text = await readStdin();
  if (text.trim().length === 0) {
    throw new CredentialError('secret_missing', `no ${what} on stdin`, {
      hint: `pipe it in, or give a file with --${what.replace(/ /g, '-')}-file`,
    });
  }
  return text;
}
