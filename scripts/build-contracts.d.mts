export function sourcesHash(): string;
export function sourceFiles(): string[];
export const SETTINGS: Record<string, unknown>;
