// Preloaded with --import: records every module URL the process resolves into $LOOPSIGN_IMPORT_LOG.
import { register } from 'node:module';

register('./record-imports-hook.mjs', import.meta.url, { data: { log: process.env.LOOPSIGN_IMPORT_LOG } });
