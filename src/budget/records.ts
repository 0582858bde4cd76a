// The grants on record in loopsign's state folder (state/budget/grants/<delegation hash>.json): the ones this machine
// granted (owner side) and the ones it imported (agent side, checked by `budget import` first). `budget show`, the MCP
// budget tool, `config show`, `history` and `budget sweep` read them from here; nothing else records a grant.
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { readUserJson } from '../fsutil.js';
import { isAddressEqual } from 'viem';
import type { Address } from '../chains/table.js';
import { parseGrantFile, type GrantFile } from './grant-file.js';

/** Where granted and imported grants are recorded: one file per grant, named by its delegation hash. */
export function grantsDir(stateDir: string): string {
  return path.join(stateDir, 'budget', 'grants');
}

export interface RecordedGrant {
  file: string;
  grant: GrantFile;
}

/**
 * Every grant recorded (optionally only those of one chain). A file that is not a grant (hand-edited, truncated)
 * is left out when `skipInvalid` (a label in `history` is not worth a failed command); otherwise it refuses (exit 2).
 */
export async function recordedGrants(stateDir: string, o: { chainId?: number; skipInvalid?: boolean } = {}): Promise<RecordedGrant[]> {
  const dir = grantsDir(stateDir);
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  const out: RecordedGrant[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let grant: GrantFile;
    try {
      grant = parseGrantFile(await readUserJson(file, 'recorded grant'), file);
    } catch (error) {
      if (o.skipInvalid) continue;
      throw error;
    }
    if (o.chainId === undefined || grant.chainId === o.chainId) out.push({ file, grant });
  }
  return out;
}

/** The recorded grants whose session address (the agent's wallet that pulls and pays) is `wallet`. */
export function grantsOfSession(grants: RecordedGrant[], wallet: string, chainId?: number): RecordedGrant[] {
  return grants.filter(
    (g) => (chainId === undefined || g.grant.chainId === chainId) && isAddressEqual(g.grant.session as Address, wallet as Address),
  );
}
