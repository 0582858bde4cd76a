// Types for test/model/check.mjs (imported by test/slot-protocol.model.test.ts).
export interface Check {
  defines: string[];
  L: number;
  R: number;
  expect: 'holds' | 'violation';
  what: string;
}
export interface PanReport {
  errors: number | undefined;
  statesStored: number | undefined;
  statesMatched: number | undefined;
  transitions: number | undefined;
  depthReached: number | undefined;
  errorDepth: number | undefined;
  truncated: boolean;
  outOfMemory: boolean;
  assertion: string | undefined;
}
export interface CheckResult extends PanReport {
  trail: string[];
  seconds: { spin: number; gcc: number; pan: number };
  output: string;
}
export declare const MODEL: string;
export declare const CHECKS: Record<string, Check>;
export declare function tools(): { spin: boolean; gcc: boolean };
export declare function parsePan(out: string): PanReport;
export declare function check(c: Check, options?: { maxDepth?: number }): Promise<CheckResult>;
export declare function summary(name: string, c: Check, r: CheckResult): string;
