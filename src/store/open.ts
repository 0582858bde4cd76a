// The database of this user's state folder, opened once per process (every Context of an MCP server shares it),
// with the JSON journals of earlier versions imported on the way.
import path from 'node:path';
import type { Output } from '../output.js';
import { journalDir, type LoopsignPaths } from '../paths.js';
import { Store } from './db.js';
import { importJournals } from './import.js';

const open = new Map<string, Promise<Store>>();

/** The database in `paths.state` (the run's XDG state folder), the old journals of `paths` imported. */
export function openStateStore(out: Output, paths: LoopsignPaths): Promise<Store> {
  const dir = paths.state;
  const key = path.resolve(dir);
  let store = open.get(key);
  if (!store) {
    store = Store.open(dir).then(async (s) => {
      await importJournals(s, journalDir(paths), out);
      return s;
    });
    open.set(key, store);
    store.catch(() => open.delete(key));
  }
  return store;
}
