// One cold verification of an audit export in a fresh process, for bench/evidence.mjs: `whole` reads the file
// whole and checks it on this thread (the reference path), `streamed` streams it to worker threads. Prints one
// JSON line: the verification's wall time and the process's CPU time (all threads), in ms.
import { readEvidenceFile } from '../build/evidence/files.js';
import { verifyAuditExport } from '../build/evidence/audit.js';
import { verifyAuditFile } from '../build/evidence/audit-stream.js';

const [how, file] = process.argv.slice(2);
const cpu = process.cpuUsage();
const t0 = process.hrtime.bigint();
const result = how === 'whole' ? verifyAuditExport((await readEvidenceFile(file, 'audit')).doc) : (await verifyAuditFile(file)).result;
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ ms, cpu: (used.user + used.system) / 1000, valid: result.valid }));
