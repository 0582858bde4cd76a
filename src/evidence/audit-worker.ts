// Worker thread of the audit verifier (audit-stream.ts): checks the batches it is sent, one at a time, in order,
// and hands each batch's buffer back with its report, for the next batch.
import { parentPort } from 'node:worker_threads';
import { checkBatch, type BatchTask } from './audit-batch.js';

parentPort!.on('message', (task: BatchTask & { id: number }) => {
  const report = checkBatch(task);
  const buffer = task.bytes.buffer;
  parentPort!.postMessage({ id: task.id, report, buffer }, [buffer as ArrayBuffer]);
});
