// loopsign generate | review wait
import type { Context } from '../context.js';
import { timeoutOf } from './ask.js';
import type { GenerateOptions, ReviewWaitOptions } from './generate.def.js';

export async function generate(ctx: Context, options: GenerateOptions): Promise<void> {
  const { generate: run } = await import('../generate/generate.js');
  const r = await run(ctx, {
    workflow: options.workflow,
    agent: options.agent,
    messages: options.message,
    maxOutputTokens: options.maxOutputTokens,
    clientRequestId: options.clientRequestId,
    retry: options.retry,
  });
  ctx.out.result(r, () =>
    [
      '=== DRAFT — NOT APPROVED ===',
      String(r.draft.text),
      '=== END OF DRAFT ===',
      `review: ${String(r.review?.lifecycle?.state ?? 'none')} (opportunity ${String(r.opportunityId)}); a draft is not approval`,
      ...(r.opportunityId ? [`next: loopsign review wait ${String(r.opportunityId)}`] : []),
    ].join('\n'),
  );
}

export async function reviewWait(ctx: Context, options: ReviewWaitOptions, args: unknown[]): Promise<void> {
  const { reviewWait: wait } = await import('../generate/generate.js');
  const r = await wait(ctx, String(args[0]), timeoutOf(options.timeout, 600));
  ctx.out.result(r, () => `review ${String(r.opportunityId)}: approved`);
}
