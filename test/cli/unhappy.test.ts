/**
 * Unhappy exits a new user meets, through the installed command (docs/cli.md "Errors"): stdout
 * on a full disk, stdout closed by the reader (`| head`), a file bootcplan may not read, a
 * directory where a file belongs, stdin with nothing on it. Each is one screen: `error: ...`
 * and a hint, exit 1 (or, for a reader that stopped early, the command's own exit), never a
 * stack trace.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureBuilt } from '../support/built.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';

const s = suite('unhappy exits of the installed command');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-unhappy-'));
chmodSync(dir, 0o755);
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 30)).yaml());
const specFile = join(dir, 'bootcplan.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));
chmodSync(clusterFile, 0o644);
chmodSync(specFile, 0o644);

const STACK = /\n\s+at .*[(/].*:\d+/;

/** `sh -c SCRIPT` with $BOOTCPLAN the installed command: for redirections spawnSync cannot make. */
function sh(script: string, opts: { input?: string } = {}) {
  const r = spawnSync('sh', ['-c', script], {
    cwd: dir,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', BOOTCPLAN: `${process.execPath} ${ensureBuilt()}` },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function oneScreen(err: string, what: string) {
  assert.not.match(err, STACK, `${what}: a stack trace:\n${err}`);
  assert.ok(err.trim().split('\n').length <= 24, `${what}: more than a screen`);
  assert.match(err, /^error: /m, `${what}: no error line:\n${err}`);
}

s('stdout on a full disk (/dev/full): exit 1, one line naming stdout, no stack trace', () => {
  if (!existsSync('/dev/full')) return; // Linux only
  const r = sh('$BOOTCPLAN plan -f bootcplan.yaml --cluster cluster.yaml -o json > /dev/full');
  assert.is(r.code, 1, r.err);
  oneScreen(r.err, 'plan > /dev/full');
  assert.match(r.err, /^error: cannot write to stdout: no space left on the device/m);
});

s("a reader that stops early (| head -c 1): no stack trace, the command's own exit code", () => {
  const r = sh('$BOOTCPLAN plan -f bootcplan.yaml --cluster cluster.yaml -o html --detailed-exitcode | head -c 1 > /dev/null; exit 0');
  assert.not.match(r.err, STACK, r.err);
  assert.not.match(r.err, /EPIPE|Unhandled/, r.err);
  const code = sh('$BOOTCPLAN plan -f bootcplan.yaml --cluster cluster.yaml -o html --detailed-exitcode | (head -c 1 > /dev/null; sleep 1); exit 0');
  assert.is(code.err, '', code.err);
});

s('a file bootcplan may not read: "permission denied", exit 1 (as another user when run as root)', () => {
  const secret = join(dir, 'secret.yaml');
  writeFileSync(secret, specYaml([{ name: 'worker', image: NEW }]));
  chmodSync(secret, 0o600);
  const asRoot = process.getuid?.() === 0;
  // root reads any file through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: as root the command runs
  // without them, and the secret belongs to nobody. Not as another user: the checkout may sit in
  // a directory only root may enter (a fresh clone in a 0700 temporary directory).
  const run = asRoot ? 'setpriv --bounding-set=-dac_override,-dac_read_search $BOOTCPLAN' : '$BOOTCPLAN';
  if (asRoot) chownSync(secret, 65534, 65534);
  else chmodSync(secret, 0o000);
  const spec = sh(`HOME=/tmp ${run} validate -f secret.yaml`);
  assert.is(spec.code, 1, spec.err);
  oneScreen(spec.err, 'validate -f unreadable');
  assert.match(spec.err, /^error: cannot read spec secret\.yaml: permission denied$/m);
  const kubeconfig = sh(`HOME=/tmp ${run} status --kubeconfig secret.yaml`);
  assert.is(kubeconfig.code, 1, kubeconfig.err);
  oneScreen(kubeconfig.err, 'status --kubeconfig unreadable');
  assert.match(kubeconfig.err, /^error: cannot read kubeconfig secret\.yaml \(--kubeconfig\): permission denied$/m);
  const out = join(dir, 'locked');
  mkdirSync(out, { recursive: true });
  chmodSync(out, 0o555);
  const write = sh(`HOME=/tmp ${run} plan -f bootcplan.yaml --cluster cluster.yaml --out locked/plan.json`);
  assert.is(write.code, 1, write.err);
  oneScreen(write.err, 'plan --out into a read-only directory');
  assert.match(write.err, /^error: cannot write locked\/plan\.json: permission denied$/m);
});

s('a directory where a file belongs: the spec, the snapshot, a plan file, a kubeconfig, KUBECONFIG', () => {
  const cases: [string, RegExp][] = [
    ['validate -f .', /^error: spec \. is a directory, not a file$/m],
    ['plan -f bootcplan.yaml --cluster .', /^error: snapshot \. is a directory, not a file$/m],
    ['show .', /^error: plan file \. is a directory, not a file$/m],
    ['status --kubeconfig .', /^error: cannot read kubeconfig \. \(--kubeconfig\): it is a directory$/m],
    ['KUBECONFIG=. $BOOTCPLAN status', /^error: cannot read kubeconfig \. \(KUBECONFIG\): it is a directory$/m],
  ];
  for (const [args, message] of cases) {
    const r = sh(args.startsWith('KUBECONFIG') ? args : `$BOOTCPLAN ${args}`);
    assert.is(r.code, 1, `${args}: ${r.err}`);
    oneScreen(r.err, args);
    assert.match(r.err, message, `${args}:\n${r.err}`);
  }
});

s('stdin with nothing on it (closed, or /dev/null): says so and how to pipe the input in', () => {
  for (const [args, what] of [
    ['plan -f - --cluster cluster.yaml', 'spec'],
    ['plan -f bootcplan.yaml --cluster -', 'snapshot'],
    ['show -', 'plan file'],
  ]) {
    for (const redirect of ['<&-', '< /dev/null']) {
      const r = sh(`$BOOTCPLAN ${args} ${redirect}`);
      assert.is(r.code, 1, `${args} ${redirect}: ${r.err}`);
      oneScreen(r.err, `${args} ${redirect}`);
      assert.match(r.err, new RegExp(`^error: the ${what} on stdin is empty: nothing was piped in\\n  hint: `, 'm'), `${args} ${redirect}:\n${r.err}`);
    }
  }
});

s.run();
