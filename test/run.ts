/**
 * The test runner (docs/development.md "How the runner counts"): runs every uvu suite
 * (test/**\/*.test.ts, or the files and folders given) in one process, lists every failure again
 * after the run, and ends with the line `N passed, N failed` (`, N skipped` when some were).
 *
 *   tsx test/run.ts [--allow-skips] [file-or-folder ...]
 *
 * Exits 1 when a test failed, a suite file threw while loading, a suite file ran no test, an
 * error escaped a test, the process ended before the run did, no test ran at all, or a test was
 * skipped (a skipped test checks nothing; `--allow-skips` accepts skips on a machine that lacks
 * what they need, never in CI). After each suite the event loop turns once, so an error its tests
 * left behind is booked against it; one that escapes after the summary (a timer firing late) is
 * printed then, fails the run, and the counts line is printed again as the last line.
 *
 * The counts come from uvu itself, never from its printed totals: the files are loaded as uvu's
 * own CLI loads them (uvu/run: UVU_DEFER, one UVU_QUEUE group per file), and this loop calls each
 * queued suite runner itself (as uvu's exec does) to read what the runner returns:
 * [failure reports, passed, skipped, tests run]. uvu's public API (run(), exec()) prints its totals
 * only as text and calls a suite whose before hook threw a pass, so these internals are read
 * instead; package.json pins uvu and the self-test checks the protocol. A failed test is one for which uvu's reporter
 * wrote its failure mark. uvu returns from a `finally` block, so an error thrown by a suite's
 * before hook (or a non-Error thrown by a test) vanishes without a failure mark; the books check
 * (passed + marked failures = tests run) counts every test unaccounted for as failed instead.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';

/** What uvu's runner (the function test.run() queues) resolves to. */
type SuiteOutcome = [reports: string | true, passed: number, skipped: number, ran: number];
type QueuedSuite = () => Promise<SuiteOutcome>;

/** One failure as listed after the run: where, and uvu's report of it (name, message, stack). */
interface Failure {
  file: string;
  report: string;
}

const tally = { passed: 0, failed: 0, skipped: 0 };
const failures: Failure[] = [];
const skips: string[] = [];
let current = { file: '(loading)', suite: '' };
let finished = false;
/** Whether the summary's verdict was a pass; an error that escapes after it makes it a fail. */
let summaryOk = true;
let lateFailures = 0;

const ANSI = /\x1b\[[0-9;]*m/g;
const plain = (s: string) => s.replace(ANSI, '');

function fail(file: string, report: string, count = 1): void {
  tally.failed += count;
  failures.push({ file, report: report.trimEnd() });
}

function describe(err: unknown): string {
  return err instanceof Error ? withoutRunnerFrames(err.stack ?? `${err.name}: ${err.message}`) : `a non-Error was thrown: ${inspect(err)}`;
}

/** A stack without the frames of uvu and of this runner: what is left is the test's place. */
function withoutRunnerFrames(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s*at .*(\/node_modules\/uvu\/|\/test\/run\.ts:|node:internal\/)/.test(plain(l)))
    .join('\n');
}

function parseArgs(argv: string[]): { roots: string[]; allowSkips: boolean } {
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--allow-skips');
  if (unknown.length) {
    console.error(`error: unknown option ${unknown[0]}\n  usage: tsx test/run.ts [--allow-skips] [file-or-folder ...]`);
    process.exit(2);
  }
  const roots = argv.filter((a) => !a.startsWith('-'));
  return { roots: roots.length ? roots : ['test'], allowSkips: argv.includes('--allow-skips') };
}

/** The suite files under the roots; a folder walk leaves out fixtures, golden files, e2e/ and smoke/. */
function collect(roots: string[]): string[] {
  const files: string[] = [];
  const walk = (p: string, top: boolean) => {
    const st = statSync(p);
    if (st.isDirectory()) {
      for (const e of readdirSync(p).sort()) {
        if (e === 'fixtures' || e === 'golden' || e === 'e2e' || e === 'smoke') continue;
        walk(join(p, e), false);
      }
    } else if (top || p.endsWith('.test.ts')) files.push(resolve(p));
  };
  for (const r of roots) walk(r, true);
  return files;
}

// uvu's reporter writes one mark per test: '• ' passed, '✘ ' failed (coloured on a terminal).
// Counting the failure marks as they are written is counting uvu's own per-test verdicts.
// A suite runner's first write is its name (` name ` and a space), when it has one.
let failMarks = 0;
let passMarks = 0;
let awaitingSuiteName = false;
let suiteStart = { passMarks: 0, failMarks: 0 };
const write = process.stdout.write.bind(process.stdout);

function watchProcess(allowSkips: boolean): void {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    if (typeof chunk === 'string') {
      if (chunk.length < 32 && plain(chunk) === '✘ ') failMarks++;
      if (chunk.length < 32 && plain(chunk) === '• ') passMarks++;
      if (awaitingSuiteName) current.suite = /^ (.+) {2}$/.exec(plain(chunk))?.[1] ?? '';
    }
    awaitingSuiteName = false;
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
  // An error that escapes a test (a rejection nobody awaited, a throw in a timer) fails the run
  // instead of ending the process; the process ending early prints what was counted so far.
  process.on('unhandledRejection', escaped);
  process.on('uncaughtException', escaped);
  process.on('exit', (code) => {
    if (finished) {
      // Errors that escaped after the summary were printed as they came; the last line must
      // still be the truth, and a test calling process.exit(0) late must not turn a failed run
      // into a passing one.
      if (lateFailures) console.log(countsLine());
      if (!summaryOk || lateFailures) process.exitCode = 1;
      return;
    }
    // The suite under way never returned its outcome: book what its reporter showed.
    tally.passed += passMarks - suiteStart.passMarks;
    const marked = failMarks - suiteStart.failMarks;
    if (marked) fail(current.file, `${where()}: ${marked} failed before the process ended (reports above)`, marked);
    fail(current.file, `the process exited (code ${code}) while ${where()} was running: a test called process.exit(), or awaited something that never settles`);
    summarise(allowSkips);
    process.exitCode = 1;
  });
}

/**
 * Books an error that reached the process. During the run it is listed with the other failures;
 * after the summary (a timer a test left behind) it is printed in full at once, and the exit
 * handler prints the corrected counts as the last line.
 */
function escaped(err: unknown): void {
  if (!finished) return fail(current.file, `an error escaped ${where()}: ${describe(err)}`);
  lateFailures++;
  tally.failed++;
  const report = `an error escaped after the run, once every suite had finished (a timer or callback a test left behind; its stack below names the file):\n${describe(err)}`;
  failures.push({ file: '(after the run)', report });
  console.log(`\n== 1 more failed after the summary above\n\n${report}\n`);
}

/**
 * Lets the event loop turn once: Node reports a rejection nobody awaited only when the
 * microtask queue drains, and a run of synchronous tests never lets it drain, so without this
 * the whole run (and its summary) would finish before the rejection was reported.
 */
function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

function where(): string {
  return current.suite ? `suite "${current.suite}" of ${current.file}` : current.file;
}

/** Runs one queued suite and books its tests: passed, failed (marked or unaccounted), skipped. */
async function runSuite(file: string, queued: QueuedSuite): Promise<number> {
  suiteStart = { passMarks, failMarks };
  current.suite = '';
  awaitingSuiteName = true;
  let outcome: SuiteOutcome;
  try {
    outcome = await queued();
  } catch (err) {
    // uvu's after hooks run in its finally block: a throw there ends the suite without a result;
    // book what its reporter showed.
    tally.passed += passMarks - suiteStart.passMarks;
    const marked = failMarks - suiteStart.failMarks;
    if (marked) fail(file, `${where()}: ${marked} failed (reports above)`, marked);
    fail(file, `${where()}: an after hook threw: ${describe(err)}`);
    return 1 + passMarks - suiteStart.passMarks + marked;
  }
  if (!isOutcome(outcome)) {
    fail(
      file,
      `${where()}: uvu's suite runner returned ${inspect(outcome)}, not the [reports, passed, skipped, ran] of uvu 0.5.6; this runner cannot count it (docs/development.md "How the runner counts")`,
    );
    return 1;
  }
  const [reports, passed, skipped, ran] = outcome;
  const marked = failMarks - suiteStart.failMarks;
  tally.passed += passed;
  tally.skipped += skipped;
  if (skipped) skips.push(`${file}${current.suite ? ` (${current.suite})` : ''}: ${skipped}`);
  if (typeof reports === 'string') write(`\n${withoutRunnerFrames(reports)}\n`);
  if (marked) fail(file, typeof reports === 'string' ? withoutRunnerFrames(plain(reports)) : `${where()}: ${marked} failed`, marked);
  const unaccounted = ran - passed - marked;
  if (unaccounted !== 0) {
    fail(
      file,
      `${where()}: of ${ran} tests run, ${passed} passed and ${marked} failed; the other ${Math.abs(unaccounted)} neither passed nor reported a failure (a before or each hook threw, or a test threw a non-Error: uvu drops that error)`,
      Math.max(1, unaccounted),
    );
  }
  return ran + skipped;
}

/** uvu's internals can change under an upgrade (package.json pins uvu): check what is read. */
function isOutcome(o: unknown): o is SuiteOutcome {
  return Array.isArray(o) && o.length === 4 && (o[0] === true || typeof o[0] === 'string') && o.slice(1).every(Number.isInteger);
}

async function runAll(files: string[]): Promise<void> {
  (globalThis as any).UVU_DEFER = 1;
  await import('uvu');
  const queue: unknown[][] = (globalThis as any).UVU_QUEUE;
  if (!Array.isArray(queue)) throw new Error(`uvu set no UVU_QUEUE: test/run.ts reads uvu 0.5.6's internals (docs/development.md "How the runner counts")`);
  const loaded: boolean[] = [];
  for (const [i, f] of files.entries()) {
    current = { file: relative(process.cwd(), f), suite: '' };
    (globalThis as any).UVU_INDEX = i;
    queue[i] = [current.file];
    try {
      await import(pathToFileURL(f).href);
      loaded[i] = true;
    } catch (err) {
      fail(current.file, `${current.file} threw while loading, so none of its tests ran:\n${describe(err)}`);
    }
  }
  for (const [i, f] of files.entries()) {
    const [name, ...suites] = queue[i] as [string, ...QueuedSuite[]];
    current = { file: relative(process.cwd(), f), suite: '' };
    write(`${i ? '\n' : ''}${name}\n`);
    let tests = 0;
    for (const s of suites) {
      tests += await runSuite(current.file, s);
      // Errors the suite's tests left behind are reported now, while it is still `current`.
      await settle();
    }
    current.suite = '';
    if (tests === 0 && loaded[i]) fail(current.file, `${current.file} ran no test: it registers none, or a suite lacks its .run()`);
  }
}

function summarise(allowSkips: boolean): boolean {
  let ok = tally.failed === 0;
  if (failures.length) {
    console.log(`\n== ${tally.failed} failed (every failure of this run, in order)`);
    for (const f of failures) console.log(`\n-- ${f.file}\n${f.report}`);
    console.log('');
  }
  if (tally.passed + tally.failed + tally.skipped === 0) {
    console.log('no test ran');
    ok = false;
  }
  if (tally.skipped && !allowSkips) {
    console.log(`${tally.skipped} skipped (a skipped test checks nothing; install what it needs, or pass --allow-skips outside CI): ${skips.join('; ')}`);
    ok = false;
  }
  const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate').length;
  // Not a failure (a test may leave a harmless timer), but it explains a run that lingers after
  // its summary, or never ends (a setInterval nobody clears).
  if (timers) console.log(`${timers} timer(s) a test left running keep the process alive; an error one throws still fails the run`);
  console.log(countsLine());
  return ok;
}

function countsLine(): string {
  return `${tally.passed} passed, ${tally.failed} failed${tally.skipped ? `, ${tally.skipped} skipped` : ''}`;
}

const { roots, allowSkips } = parseArgs(process.argv.slice(2));
const files = collect(roots);
watchProcess(allowSkips);
await runAll(files);
await settle();
finished = true;
process.stdout.write = write;
summaryOk = summarise(allowSkips);
process.exitCode = summaryOk ? 0 : 1;
