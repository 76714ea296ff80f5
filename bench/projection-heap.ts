/**
 * The heap a process holds for a snapshot file's workloads once read (bench/live-snapshot.ts):
 * read, parsed and projected, then everything but the workloads dropped. Prints the bytes.
 *   node --expose-gc --import tsx bench/projection-heap.ts SNAPSHOT
 */
import { readFileSync } from 'node:fs';
import { parseSnapshot } from '../src/cluster/snapshot-file.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const file = process.argv[2];
gc();
gc();
const before = process.memoryUsage().heapUsed;
const workloads = parseSnapshot(readFileSync(file, 'utf8'), file).snapshot?.workloads;
gc();
gc();
const held = process.memoryUsage().heapUsed - before;
console.log(workloads ? held : -1);
