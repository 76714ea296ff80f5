/**
 * The runner's self-test (docs/development.md "How the runner counts"), run by .ci/run before any
 * suite: test/run.ts on the fixture suites in test/fixtures/runner/, each alone, checking the exit
 * code, the last line and that every failure is listed after the run; then uvu's runner protocol
 * the runner reads (uvuProtocol below). A plain script with node:assert, not a uvu suite, so its
 * verdict does not rest on the runner it checks.
 *   npm run test:runner
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const FIXTURES = 'test/fixtures/runner';

/** The two ways test/run.ts runs suites: in its own process, or handing them to worker processes. */
const MODES = { 'in one process': '1', 'in 2 workers': '2' } as const;
type Mode = keyof typeof MODES;

interface Expected {
  args: string[];
  code: 0 | 1;
  last: string;
  after?: RegExp[];
  /** Default: both. */
  modes?: Mode[];
  /** Set in the runner's environment. */
  env?: Record<string, string>;
}

const cases: Record<string, Expected> = {
  'all passing': { args: ['passing'], code: 0, last: '2 passed, 0 failed' },
  'two failures, the second after 400 lines of log': {
    args: ['failing'],
    code: 1,
    last: '1 passed, 2 failed',
    // Listed again after the noise, each with its name, message and place.
    after: [
      /"first failure: wrong sum"/,
      /one and one make three/,
      /failing\.test\.ts:8:\d+/,
      /"logs a lot, then fails"/,
      /deep failure after the noise/,
      /failing\.test\.ts:11:\d+/,
    ],
  },
  'a skipped test': { args: ['skipped'], code: 1, last: '1 passed, 0 failed, 1 skipped', after: [/skipped\.test\.ts/] },
  'a skipped test with --allow-skips': { args: ['--allow-skips', 'skipped'], code: 0, last: '1 passed, 0 failed, 1 skipped' },
  // A test that finds its tool missing (test/support/skips.ts) is skipped, not passed; outside CI.
  'a test skipped at run time (a tool missing)': {
    args: ['skipped-locally'],
    code: 1,
    last: '1 passed, 0 failed, 1 skipped',
    after: [/skipped-locally\.test\.ts \(skipped locally\): 1/],
    env: { CI: '' },
  },
  'a test skipped at run time, with --allow-skips': {
    args: ['--allow-skips', 'skipped-locally'],
    code: 0,
    last: '1 passed, 0 failed, 1 skipped',
    env: { CI: '' },
  },
  'a test skipped at run time in CI: a failure': {
    args: ['skipped-locally'],
    code: 1,
    last: '1 passed, 1 failed',
    after: [/no-such-tool must be installed in CI/],
    env: { CI: 'true' },
  },
  'a suite that throws while loading': {
    args: ['import-error'],
    code: 1,
    last: '0 passed, 1 failed',
    after: [/threw while loading/, /broken at import/, /import-error\.test\.ts:7:\d+/],
  },
  'a suite with no test run (no .run())': { args: ['no-tests'], code: 1, last: '0 passed, 1 failed', after: [/no-tests\.test\.ts ran no test/] },
  'a before hook that throws (uvu drops its error)': {
    args: ['hook-error'],
    code: 1,
    last: '0 passed, 1 failed',
    after: [/neither passed nor reported a failure/],
  },
  'an after hook that throws': { args: ['after-hook-error'], code: 1, last: '2 passed, 1 failed', after: [/an after hook threw/, /after hook broke/] },
  'a test that exits the process with code 0': { args: ['exits'], code: 1, last: '1 passed, 1 failed', after: [/process exited \(code 0\)/] },
  'an error that escapes a passing test': { args: ['escapes'], code: 1, last: '1 passed, 1 failed', after: [/nobody awaited me/, /escapes\.test\.ts:8:\d+/] },
  'two passed, one failed, one skipped': { args: ['protocol'], code: 1, last: '2 passed, 1 failed, 1 skipped', after: [/the failing one/] },
  'a passing and a failing suite together': { args: ['passing', 'failing'], code: 1, last: '3 passed, 2 failed' },
  // Node reports these only after the code that caused them has returned: the runner must wait
  // for them (or book them after its summary) rather than print a clean count and exit 0.
  'a rejection a synchronous test leaves behind': {
    args: ['late-rejection'],
    code: 1,
    last: '1 passed, 1 failed',
    after: [/rejected after the test returned/, /late-rejection\.test\.ts:9:\d+/],
  },
  'a rejection left behind, then another file passes': {
    args: ['late-rejection', 'passing'],
    code: 1,
    last: '3 passed, 1 failed',
    // Booked against the file that left it, not the one running when Node got round to it.
    after: [/-- test\/fixtures\/runner\/late-rejection\.test\.ts\n.*late rejection/, /rejected after the test returned/],
  },
  'a timer that throws after the summary': {
    args: ['late-timer'],
    code: 1,
    last: '1 passed, 1 failed',
    after: [/1 timer\(s\) a test left running/, /after the run/, /thrown by a timer after the run/, /late-timer\.test\.ts:9:\d+/],
  },
  // In a single process the event loop empties and the exit handler books it; a worker must not
  // be kept alive by its IPC channel while a file runs, or the run would hang instead.
  'a test awaiting what never settles': {
    args: ['never-settles'],
    code: 1,
    last: '0 passed, 1 failed',
    after: [/process exited \(code 0\) while suite "never settles"/],
  },
  // A worker killed mid-file (no exit handler runs): the file fails with the worker's output,
  // and a new worker takes the files left in the queue (crash.test.ts, the largest fixture, is
  // handed out first). A single process killed leaves no runner to check.
  'a worker killed mid-file, the other files run by a new worker': {
    args: ['crash', 'passing', 'failing', 'protocol'],
    code: 1,
    last: '5 passed, 4 failed, 1 skipped',
    after: [
      /-- test\/fixtures\/runner\/crash\.test\.ts\nthe worker process running test\/fixtures\/runner\/crash\.test\.ts was killed by SIGKILL/,
      /about to be killed/,
      /one and one make three/,
      /the failing one/,
    ],
    modes: ['in 2 workers'],
  },
  // Counts from several workers summed, every failure listed in the order of the files given,
  // whichever worker ran them, and a late error booked against its own file.
  'five files over two workers': {
    args: ['--allow-skips', 'protocol', 'late-rejection', 'passing', 'failing', 'escapes'],
    code: 1,
    last: '7 passed, 5 failed, 1 skipped',
    after: [
      /-- test\/fixtures\/runner\/protocol\.test\.ts\n[^]*the failing one[^]*-- test\/fixtures\/runner\/late-rejection\.test\.ts\n.*late rejection[^]*-- test\/fixtures\/runner\/failing\.test\.ts\n[^]*-- test\/fixtures\/runner\/escapes\.test\.ts\n.*nobody awaited me/,
    ],
  },
  // Each end-to-end suite file in a process of its own: the second sees neither the environment
  // variable nor the module state the first left (as test/e2e/env.ts's control plane is one per
  // process). A single process runs them one after another by design.
  'two end-to-end suites, each in a fresh worker process': {
    args: ['e2e/leaves-state', 'e2e/fresh-process'],
    code: 0,
    last: '2 passed, 0 failed',
    modes: ['in 2 workers'],
  },
};

function runner(args: string[], mode: Mode, env: Record<string, string> = {}): { code: number | null; out: string } {
  // A bare name is a fixture (e2e/NAME one of the end-to-end fixtures); a path is taken as is.
  const paths = args.map((a) => (a.startsWith('-') || a.startsWith('/') || a.startsWith('test/') ? a : join(FIXTURES, `${a}.test.ts`)));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/run.ts', ...paths], {
    encoding: 'utf8',
    // No durations of earlier runs: the fixtures go to the workers by size, largest first.
    env: { ...process.env, NO_COLOR: '1', TEST_JOBS: MODES[mode], TEST_DURATIONS: durations, ...env },
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

function check(name: string, e: Expected, r: { code: number | null; out: string }): void {
  const lines = r.out.trimEnd().split('\n');
  assert.equal(lines.at(-1), e.last, `${name}: last line`);
  assert.equal(r.code, e.code, `${name}: exit code`);
  // What a reader of the end of the log sees: everything after the last line of test output.
  const noise = r.out.lastIndexOf('noise line 399');
  const tail = r.out.slice(noise < 0 ? 0 : noise + 'noise line 399'.length);
  for (const re of e.after ?? []) assert.match(tail, re, `${name}: listed after the run`);
}

/**
 * test/run.ts drives uvu through the protocol of uvu's own CLI (uvu/run): with UVU_DEFER set,
 * each suite's .run() pushes its runner onto UVU_QUEUE[UVU_INDEX], and the runner resolves to
 * [failure reports or true, passed, skipped, tests run]. These are uvu's internals
 * (docs/development.md "How the runner counts" says why the runner uses them, and why uvu is
 * pinned): if an upgrade changes them, this fails, naming what moved.
 */
async function uvuProtocol(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  g.UVU_DEFER = 1;
  await import('uvu');
  const queue = g.UVU_QUEUE;
  assert.ok(Array.isArray(queue), `uvu no longer sets globalThis.UVU_QUEUE (got ${typeof queue})`);
  g.UVU_INDEX = queue.length;
  queue.push(['protocol']);
  await import(pathToFileURL(resolve(FIXTURES, 'protocol.test.ts')).href);
  const [name, ...runners] = queue.at(-1) as unknown[];
  assert.equal(name, 'protocol', 'the group keeps the file name pushed before the import');
  assert.equal(runners.length, 1, 'one queued runner for the one suite');
  assert.equal(typeof runners[0], 'function', 'the queued runner is a function');
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write; // its report is not ours to show
  let outcome: unknown;
  try {
    outcome = await (runners[0] as () => Promise<unknown>)();
  } finally {
    process.stdout.write = write;
  }
  assert.ok(Array.isArray(outcome) && outcome.length === 4, `the runner's result is not a 4-tuple: ${JSON.stringify(outcome)}`);
  const [reports, passed, skipped, ran] = outcome as unknown[];
  assert.ok(typeof reports === 'string' && reports.includes('the failing one'), 'first: the failure reports, as text');
  assert.deepEqual([passed, skipped, ran], [2, 1, 3], '[reports, passed, skipped, tests run]');
}

let failed = 0;
let total = 0;
const empty = mkdtempSync(join(tmpdir(), 'bootcplan-runner-'));
const scratch = mkdtempSync(join(tmpdir(), 'bootcplan-runner-durations-'));
const durations = join(scratch, 'durations.json');
cases['a folder without suites'] = { args: [empty], code: 1, last: '0 passed, 0 failed', after: [/no test ran/] };
try {
  for (const [name, e] of Object.entries(cases)) {
    for (const mode of e.modes ?? (Object.keys(MODES) as Mode[])) {
      total++;
      rmSync(durations, { force: true });
      const r = runner(e.args, mode, e.env);
      try {
        check(name, e, r);
        console.log(`ok   ${name} (${mode})`);
      } catch (err) {
        failed++;
        console.log(
          `FAIL ${name} (${mode})\n${(err as Error).message}\n--- runner output (last 40 lines)\n${r.out.trimEnd().split('\n').slice(-40).join('\n')}\n---`,
        );
      }
    }
  }
} finally {
  rmSync(empty, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
try {
  await uvuProtocol();
  console.log("ok   uvu's runner protocol (UVU_QUEUE, the runner's result tuple)");
} catch (err) {
  failed++;
  console.log(`FAIL uvu's runner protocol: test/run.ts can no longer read uvu's counts\n${(err as Error).message}`);
}
total++;
console.log(`runner self-test: ${total - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
