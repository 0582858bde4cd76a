// Worker thread of the audit verifier (audit-stream.ts): checks the batches it is sent, one at a time, in order.
import { parentPort } from 'node:worker_threads';
import { checkBatch, type BatchTask } from './audit-batch.js';

parentPort!.on('message', (task: BatchTask & { id: number }) => {
  parentPort!.postMessage({ id: task.id, report: checkBatch(task) });
});
