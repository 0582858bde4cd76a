// What every command handler receives: the output channel and the (lazily) resolved configuration.
// config.ts pulls in zod, so it is imported only when a command asks for its configuration.
import type { Output } from './output.js';
import type { GlobalFlags, ResolvedConfig } from './config.js';

export interface Context {
  out: Output;
  flags: GlobalFlags;
  config(): Promise<ResolvedConfig>;
}

export function createContext(flags: GlobalFlags, out: Output): Context {
  let resolved: Promise<ResolvedConfig> | undefined;
  return {
    out,
    flags,
    config: () => (resolved ??= import('./config.js').then((m) => m.resolveConfig(flags))),
  };
}
