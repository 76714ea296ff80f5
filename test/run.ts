/**
 * Runs every uvu suite (test/**\/*.test.ts, or the files/folders given) in one process and
 * ends with the line `N passed, N failed` (CI reads it). Exits non-zero when a test fails or
 * when no test ran at all.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const roots = args.length ? args : ['test'];
const files: string[] = [];
const collect = (p: string) => {
  const st = statSync(p);
  if (st.isDirectory()) {
    for (const e of readdirSync(p).sort()) {
      if (e === 'fixtures' || e === 'golden' || e === 'e2e') continue;
      collect(join(p, e));
    }
  } else if (p.endsWith('.test.ts')) files.push(resolve(p));
};
for (const r of roots) collect(r);

// uvu prints "Total:", "Passed:" and "Skipped:" lines; capture them to build our summary line.
let captured = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: any, ...rest: any[]) => {
  captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  return write(chunk, ...rest);
}) as typeof process.stdout.write;

(globalThis as any).UVU_DEFER = 1;
const uvu = await import('uvu');
let idx = 0;
for (const f of files) {
  (globalThis as any).UVU_INDEX = idx++;
  (globalThis as any).UVU_QUEUE.push([relative(process.cwd(), f)]);
  await import(pathToFileURL(f).href);
}
await uvu.exec(false);
process.stdout.write = write;

const plain = captured.replace(/\x1b\[[0-9;]*m/g, '');
const num = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0);
const total = num('Total');
const passed = num('Passed');
const skipped = num('Skipped');
const failed = total - passed - skipped;
if (total === 0) {
  console.log(`no tests ran (looked in ${roots.join(', ')})`);
  console.log('0 passed, 0 failed');
  process.exit(1);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
