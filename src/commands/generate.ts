// loopsign generate (seed-only)
import type { Context } from '../context.js';
import type { GenerateOptions } from './generate.def.js';
import { withRerun } from './rerun.js';

async function generateHandler(ctx: Context, options: GenerateOptions): Promise<void> {
  const { generate: run } = await import('../generate/generate.js');
  const r = await run(ctx, {
    workflow: options.workflow,
    agent: options.agent,
    messages: options.message,
    maxOutputTokens: options.maxOutputTokens,
    clientRequestId: options.clientRequestId,
    retry: options.retry,
    credential: { apiKeyFile: options.apiKeyFile, apiKeyEnv: options.apiKeyEnv },
  });
  ctx.out.result(r, () =>
    [
      '=== DRAFT — NOT APPROVED ===',
      String(r.draft.text),
      '=== END OF DRAFT ===',
      `review: ${String(r.reviewState ?? 'none')}${r.opportunityId ? ` (opportunity ${String(r.opportunityId)})` : ''}; a draft is not approval`,
      ...(r.next as string[]).map((n) => `next: ${n}`),
    ].join('\n'),
  );
}

// Printed commands carry the flags that chose the credential and the service (./rerun.ts).
export const generate = withRerun(generateHandler);
