// Global setup for the secrets suite: provides the capture directory to every test file, and after the whole
// run scans everything every test printed and every file loopsign wrote in the test homes (journals, config,
// keystores) for the private keys and passwords the tests used. A leak fails the run. It also prints the counts
// the hardening suites recorded (hostile scenarios refused, kill points recovered, fuzz inputs tried) and the
// summary lines suites wrote (the live corpus replay's counts). A clean run removes the homes it scanned.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { capturedHomes, countTotals, scanCapture, summaryLines } from '../helpers/capture.js';

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopsign-capture-'));
  project.provide('captureDir', dir);
  const name = project.name;
  return () => {
    for (const line of summaryLines(dir)) console.log(line);
    const totals = countTotals(dir);
    if (Object.keys(totals).length)
      console.log(
        `[${name}] hardening: ${Object.entries(totals)
          .map(([k, n]) => `${k}: ${n}`)
          .join('; ')}`,
      );
    const report = scanCapture(dir);
    console.log(
      `[${name}] secrets scan: ${report.runs} runs and ${report.files} files loopsign wrote, checked for ${report.secrets} secrets: ${report.leaks.length} leaks`,
    );
    if (report.leaks.length > 0) {
      // A throw here is only logged by vitest; the exit code is what CI sees.
      console.error(`secrets leaked in:\n  ${report.leaks.join('\n  ')}`);
      process.exitCode = 1;
      return;
    }
    // Scanned and clean: the homes (a few hundred folders a run) go too. After a leak they stay, to be looked at.
    for (const home of capturedHomes(dir)) rmSync(home, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
}
