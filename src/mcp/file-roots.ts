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

/**
 * The path with every link resolved; for a path that does not exist yet, its nearest existing folder's. A path that
 * exists but does not resolve — a link to what the kernel cannot name as a path, such as /proc/self/fd/0 (the server's
 * own stdin) or a deleted file — is undefined: checking its folder instead would let the read follow the link anywhere.
 */
async function real(file: string): Promise<string | undefined> {
  const abs = path.resolve(file);
  try {
    return await fs.realpath(abs);
  } catch {
    if (
      await fs.lstat(abs).then(
        () => true,
        () => false,
      )
    )
      return undefined;
    const parent = path.dirname(abs);
    if (parent === abs) return abs;
    const dir = await real(parent);
    return dir === undefined ? undefined : path.join(dir, path.basename(abs));
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
    this.denied = Promise.all(denied.map(async (d) => (await real(d)) ?? path.resolve(d)));
  }

  async check(file: string, what: string): Promise<string> {
    const refuse = (why: string, hint: string): never => {
      throw new RefusedError('file_not_allowed', `refused: ${what} ${file} ${why}; nothing was read`, {
        hint,
        details: { rule: 'file_not_allowed' },
      });
    };
    const target = (await real(file)) ?? refuse('is a link that does not lead to a file path', 'give a regular file in a project folder');
    if (PSEUDO.some((d) => inside(target, d))) refuse('is in a kernel pseudo-filesystem', 'give a file in a project folder');
    if ((await this.denied).some((d) => inside(target, d))) {
      refuse(
        "is one of loopsign's own secrets or state (keystore, password, policy, configuration or database)",
        'these are never read through a tool; give a file in a project folder',
      );
    }
    const roots = (await Promise.all((await this.roots()).map(real))).filter((r): r is string => r !== undefined);
    if (roots.length === 0) {
      refuse(
        'cannot be read: this server has no folders to read from',
        'the MCP host declares none (MCP roots); start the server with `loopsign mcp --root DIR`',
      );
    }
    if (!roots.some((r) => inside(target, r)))
      refuse(
        `is outside the folders this server may read (${roots.join(', ')})`,
        'give a file under one of them, or restart the server with another folder: `loopsign mcp --root DIR`',
      );
    // What the path holds, not only where it is. A FIFO or a device would hold the read (and the server) for ever; a
    // file with several names (hard links) may be one of the secrets above under a name inside a root. (A file that
    // does not exist yet is left to the command, which says so.)
    const stat = await fs.stat(target).catch(() => undefined);
    if (stat && !stat.isFile())
      refuse('is not a regular file (a folder, a FIFO, a socket or a device)', 'give a regular file in a project folder');
    if (stat && stat.nlink > 1)
      refuse(
        `has other names (${stat.nlink} hard links), and may be one of loopsign's secrets under another name`,
        'copy the file and give the copy (a copy has one name)',
      );
    return target;
  }
}
