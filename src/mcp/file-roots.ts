// The files an MCP tool may read (issue 20 §3). An agent names paths; the server reads them only under the host's
// declared roots (MCP roots/list) or the folders its user named at start (`loopsign mcp --root DIR`), never in the
// kernel's pseudo-filesystems, and never loopsign's own secrets and state — the keystore, the password file, the
// config folder (policy.json, config.json), the data and state folders (keystores, the database) — whatever the roots
// say. Paths are compared after resolving links, so a link inside a root cannot lead out of it.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { RefusedError } from '../errors.js';
import type { FileGate } from '../files.js';

const PSEUDO = ['/proc', '/sys', '/dev'];

/** The path with every link resolved; for a path that does not exist yet, its nearest existing folder's. */
async function real(file: string): Promise<string> {
  const abs = path.resolve(file);
  try {
    return await fs.realpath(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(await real(parent), path.basename(abs));
  }
}

const inside = (file: string, dir: string) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

export class RootsGate implements FileGate {
  private denied: Promise<string[]>;

  /**
   * `roots`: the allowed folders now (the host's roots can change between calls); `denied`: files and folders never
   * read, whatever the roots.
   */
  constructor(
    private readonly roots: () => Promise<string[]>,
    denied: string[],
  ) {
    this.denied = Promise.all(denied.map(real));
  }

  async check(file: string, what: string): Promise<string> {
    const target = await real(file);
    const refuse = (why: string, hint: string): never => {
      throw new RefusedError('file_not_allowed', `refused: ${what} ${file} ${why}; nothing was read`, { hint, details: { rule: 'file_not_allowed' } });
    };
    if (PSEUDO.some((d) => inside(target, d))) refuse('is in a kernel pseudo-filesystem', 'give a file in a project folder');
    if ((await this.denied).some((d) => inside(target, d))) {
      refuse("is one of loopsign's own secrets or state (keystore, password, policy, configuration or database)", 'these are never read through a tool; give a file in a project folder');
    }
    const roots = await Promise.all((await this.roots()).map(real));
    if (roots.length === 0) {
      refuse('cannot be read: this server has no folders to read from', 'the MCP host declares none (MCP roots); start the server with `loopsign mcp --root DIR`, or pass the JSON inline where the tool takes it');
    }
    if (!roots.some((r) => inside(target, r))) refuse(`is outside the folders this server may read (${roots.join(', ')})`, 'give a file under one of them, or start the server with another `--root DIR`');
    return target;
  }
}
