// Every project runs its files one after another in one process per worker (isolate: false in vitest.config.ts): a
// module mocked, a global or variable stubbed, or fake timers left on by one file would reach the next files. A test
// that needs another effect takes it as a parameter or from its Context.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TEST = path.dirname(fileURLToPath(import.meta.url));
const SHARED = readdirSync(TEST).filter((f) => f.endsWith('.test.ts'));
const PER_PROCESS = /\bvi\s*\.\s*(mock|doMock|stubEnv|stubGlobal|useFakeTimers|hoisted)\s*\(/;

describe('files that share a worker process', () => {
  it('are found (all three layers)', () => {
    expect(SHARED.filter((f) => f.endsWith('.cli.test.ts')).length).toBeGreaterThan(5);
    expect(SHARED.filter((f) => f.endsWith('.e2e.test.ts')).length).toBeGreaterThan(5);
    expect(SHARED.filter((f) => !/\.(cli|e2e)\.test\.ts$/.test(f)).length).toBeGreaterThan(5);
  });

  it('mock no module, stub no global or variable and fake no timers', () => {
    const offenders = SHARED.filter((f) => PER_PROCESS.test(readFileSync(path.join(TEST, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
