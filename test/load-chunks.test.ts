// bin/load-chunks.cjs, the loader of the program's files (dist/*.cjs) with their V8 code caches: a cache is used only
// for the very file it was made from, and a file whose code threw is run again by the next require, as node's own.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const loaderFile = path.resolve(import.meta.dirname, '../bin/load-chunks.cjs');

/** A fresh copy of the loader (its table of loaded files is per copy) over a dist/ with these files. */
function distWith(files: Record<string, string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'loopsign-load-chunks-'));
  const dist = path.join(root, 'dist');
  mkdirSync(path.join(dist, 'chunks'), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dist, name), text);
  const fresh = () => {
    delete require.cache[loaderFile];
    return require(loaderFile) as { loadProgram(dist: string): any; writeCaches(dist: string): { files: number } };
  };
  return { dist, fresh, done: () => rmSync(root, { recursive: true, force: true }) };
}

describe('the code-cache loader', () => {
  it("runs a file's current code, never a cache made from other code of the same length", () => {
    // A value of the file's top-level code, which the cache holds compiled (a function's body may not be in it).
    const { dist, fresh, done } = distWith({ 'cli.cjs': `"use strict"; exports.main = 'AAAA-cccc';` });
    try {
      expect(fresh().writeCaches(dist).files).toBe(1);
      expect(fresh().loadProgram(dist).main).toBe('AAAA-cccc');
      // The same length: V8 itself would take the old cache and run the old code.
      writeFileSync(path.join(dist, 'cli.cjs'), `"use strict"; exports.main = 'AAAA-dddd';`);
      expect(fresh().loadProgram(dist).main).toBe('AAAA-dddd');
    } finally {
      done();
    }
  });

  it('a cache that is cut short or garbage is not used; the file runs', () => {
    const { dist, fresh, done } = distWith({ 'cli.cjs': `"use strict"; exports.main = () => 7;` });
    try {
      for (const bytes of [Buffer.alloc(0), Buffer.alloc(10), Buffer.alloc(4096, 7)]) {
        writeFileSync(path.join(dist, 'cli.cjs.v8'), bytes);
        expect(fresh().loadProgram(dist).main()).toBe(7);
      }
    } finally {
      done();
    }
  });

  it('a file whose code threw is run again, and throws again, on the next require', () => {
    const { dist, fresh, done } = distWith({
      'cli.cjs': `"use strict"; exports.main = () => { try { require('./chunks/bad.cjs'); } catch (e) { return e.message; } };`,
      'chunks/bad.cjs': `"use strict"; globalThis.__loopsignBadRuns = (globalThis.__loopsignBadRuns ?? 0) + 1; throw new Error('bad ' + globalThis.__loopsignBadRuns);`,
    });
    try {
      const { main } = fresh().loadProgram(dist);
      expect(main()).toBe('bad 1');
      expect(main()).toBe('bad 2');
    } finally {
      delete (globalThis as Record<string, unknown>).__loopsignBadRuns;
      done();
    }
  });
});
