/**
 * Stopping a bootcplan process, in real time (docs/apply.md "Stopping"; docs/design.md §7): a child
 * process runs the CLI's entry with real signal handling against a simulated cluster that
 * answers like an API server and whose nodes stay mid-staging (test/support/stop-child.ts). These are
 * the stops found spinning on a real kube-apiserver: the staging observer retried its aborted
 * wait at once, forever, on promise callbacks alone, so the process burnt a core, never ran its
 * clean-up (the lock stayed taken, MCO pools it unpaused stayed unpaused) and never saw a second
 * signal; only SIGKILL ended it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/built.ts';

const s = suite('stopping a process (real time)');

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
  at: Record<string, number>;
  exitedAt: number;
  killed: boolean;
}

/**
 * Runs test/support/stop-child.ts SCENARIO; `react` sees every chunk of output and may signal the child
 * (and stamp moments in `at`). A child still running after `limitMs` is killed (SIGKILL).
 */
function child(
  scenario: string,
  react: (c: { out: string; err: string; kill: (s: NodeJS.Signals) => void; at: Record<string, number> }) => void,
  limitMs = 20_000,
): Promise<Child> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/support/stop-child.ts'), scenario], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const st = {
      out: '',
      err: '',
      at: {} as Record<string, number>,
      kill: (sig: NodeJS.Signals) => {
        p.kill(sig);
      },
    };
    let killed = false;
    const limit = setTimeout(() => {
      killed = true;
      p.kill('SIGKILL');
    }, limitMs);
    p.stdout.on('data', (d) => {
      st.out += d;
      react(st);
    });
    p.stderr.on('data', (d) => {
      st.err += d;
      react(st);
    });
    p.on('exit', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, out: st.out, err: st.err, at: st.at, exitedAt: Date.now(), killed });
    });
  });
}

const tail = (c: Child) => `exit ${c.code ?? c.signal}${c.killed ? ' (killed after the limit: it did not end)' : ''}\n--- stderr ---\n${c.err.slice(-3000)}`;

s('SIGTERM while the nodes stage (the staging observer waiting): the process exits 143 within 2 s, its clean-up done', async () => {
  const c = await child('apply', (st) => {
    if (!st.at.sent && st.out.includes('"type":"stage-start"')) {
      st.at.sent = Date.now();
      st.kill('SIGTERM');
    }
  });
  assert.ok(c.at.sent, `never staging: ${tail(c)}`);
  assert.is(c.code, 143, tail(c));
  assert.ok(c.exitedAt - c.at.sent < 2000, `exited ${c.exitedAt - c.at.sent} ms after SIGTERM`);
  assert.match(c.err, /bootcplan: stopped by SIGTERM in pool worker, wave 1: stopped at a safe point, .*the lock is released/);
  assert.match(c.err, /child: lease released; 0 wait\(s\) left open/);
});

s('a second signal exits at once, even while the clean-up of the first cannot finish (the API server stopped answering)', async () => {
  const c = await child('apply-hang', (st) => {
    if (!st.at.first && st.out.includes('"type":"stage-start"')) {
      st.at.first = Date.now();
      st.kill('SIGTERM');
    }
    if (st.at.first && !st.at.second && st.err.includes('stopping at the next safe point')) {
      st.at.second = -1;
      setTimeout(() => {
        st.at.second = Date.now();
        st.kill('SIGTERM');
      }, 300);
    }
  });
  assert.ok(c.at.second > 0, `no second signal sent: ${tail(c)}`);
  assert.is(c.code, 143, tail(c));
  assert.ok(c.exitedAt - c.at.second < 1000, `exited ${c.exitedAt - c.at.second} ms after the second SIGTERM`);
  assert.match(c.err, /bootcplan: SIGTERM again: exiting now; the lock is left to expire/);
  assert.not.match(c.err, /child: exit/, "the first stop's clean-up never finished: the second signal ended the process");
});

s('a lost lock (the Lease taken over while the nodes stage): the process exits 4 within 2 s', async () => {
  const c = await child('lost-lock', (st) => {
    if (!st.at.taken && st.err.includes('child: the Lease was taken over')) st.at.taken = Date.now();
  });
  assert.ok(c.at.taken, `the Lease was never taken: ${tail(c)}`);
  assert.is(c.code, 4, tail(c));
  assert.ok(c.exitedAt - c.at.taken < 2000, `exited ${c.exitedAt - c.at.taken} ms after the Lease was taken`);
  // The apply's own clock too: the loss is seen on the watch, not at the next renewal (a third of the lease later).
  const virtual = Number(/child: ended ([\d.]+) s of virtual time after the Lease was taken/.exec(c.err)?.[1]);
  assert.ok(virtual <= 2, `ended ${virtual} s (virtual) after the Lease was taken`);
  assert.match(c.err, /error: this apply lost its lock \(lock id [0-9a-f]+\): the Lease is now held by cronjob@cluster/);
  assert.match(c.err, /child: lease cronjob@cluster; 0 wait\(s\) left open/, "the new holder's Lease is left alone");
  assert.not.ok(c.killed, tail(c));
});

s('fleet apply: a batch that times out while its cluster stages (batchTimeoutSeconds: 1) ends the run within 2 s of the timeout, exit 5', async () => {
  const c = await child('fleet', (st) => {
    if (!st.at.timeout && st.out.includes('"type":"fleet-batch-timeout"')) st.at.timeout = Date.now();
  });
  assert.ok(c.at.timeout, `no batch timeout: ${tail(c)}`);
  assert.is(c.code, 5, tail(c));
  assert.ok(c.exitedAt - c.at.timeout < 2000, `exited ${c.exitedAt - c.at.timeout} ms after the batch timed out`);
  assert.match(c.out, /"type":"fleet-cluster-done"[^\n]*"outcome":"timed-out"/);
});

s.run();
