/**
 * Output files in a shared directory (issue "Sealed plans and hostile input"): the old
 * `--out` wrote through a predictable temp name and followed symbolic links, so another user
 * could make it overwrite their choice of file; it also replaced device files.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, symlinkSync, mkdirSync, readdirSync, existsSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../src/cli/files.ts';
import { InputError } from '../src/base/errors.ts';
import { run } from '../src/cli/main.ts';
import type { CliIO } from '../src/cli/io.ts';

const s = suite('output files');
const dir = () => mkdtempSync(join(tmpdir(), 'bootcplan-files-'));

function refused(fn: () => void, message: RegExp) {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InputError);
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable('the write was not refused');
}

s('the symlink race: links planted at every temp name the old code used change nothing', () => {
  const d = dir();
  const victim = join(d, 'victim.txt');
  writeFileSync(victim, 'precious');
  // The old temp name was `.<name>.<pid>.tmp`: plant it for this pid and a range around it.
  for (let pid = process.pid - 50; pid <= process.pid + 50; pid++) symlinkSync(victim, join(d, `.plan.json.${pid}.tmp`));
  writeFileAtomic(join(d, 'plan.json'), '{"new":true}');
  assert.is(readFileSync(victim, 'utf8'), 'precious');
  assert.is(readFileSync(join(d, 'plan.json'), 'utf8'), '{"new":true}');
});

s('a symbolic link as the target is refused; the file it points to is untouched', () => {
  const d = dir();
  const victim = join(d, 'victim.txt');
  writeFileSync(victim, 'precious');
  symlinkSync(victim, join(d, 'plan.json'));
  refused(() => writeFileAtomic(join(d, 'plan.json'), 'x'), /is a symbolic link, and bootcplan replaces only regular files/);
  assert.is(readFileSync(victim, 'utf8'), 'precious');
  assert.ok(lstatSync(join(d, 'plan.json')).isSymbolicLink());
});

s('a directory, a device and a file as a parent directory are clean errors', () => {
  const d = dir();
  mkdirSync(join(d, 'plans.json'));
  refused(() => writeFileAtomic(join(d, 'plans.json'), 'x'), /it is a directory/);
  refused(() => writeFileAtomic('/dev/null', 'x'), /not a regular file/);
  writeFileSync(join(d, 'file'), 'x');
  refused(() => writeFileAtomic(join(d, 'file', 'plan.json'), 'x'), /cannot create the directory/);
});

s('a failed write leaves the old file whole and no temp file behind', () => {
  const d = dir();
  const target = join(d, 'plan.json');
  writeFileSync(target, 'old');
  refused(() => writeFileAtomic(target, 'new', { rename: () => { throw Object.assign(new Error('disk full'), { code: 'ENOSPC' }); } }), /cannot write .*: ENOSPC/);
  assert.is(readFileSync(target, 'utf8'), 'old');
  assert.equal(readdirSync(d), ['plan.json']);
});

s('a regular file is replaced whole; a new file and its directory are created', () => {
  const d = dir();
  writeFileSync(join(d, 'plan.json'), 'old content that is longer');
  writeFileAtomic(join(d, 'plan.json'), 'new');
  assert.is(readFileSync(join(d, 'plan.json'), 'utf8'), 'new');
  writeFileAtomic(join(d, 'deep', 'er', 'plan.json'), 'x');
  assert.ok(existsSync(join(d, 'deep', 'er', 'plan.json')));
  assert.equal(readdirSync(d).sort(), ['deep', 'plan.json']);
});

s('through the CLI: plan --out onto a symbolic link exits 1 with one line, no stack', async () => {
  const d = dir();
  writeFileSync(join(d, 'victim'), 'precious');
  symlinkSync(join(d, 'victim'), join(d, 'out.json'));
  let err = '';
  const io: CliIO = { stdout: () => {}, stderr: (x) => { err += x; }, env: { NO_COLOR: '1' }, stdoutIsTTY: false, stderrIsTTY: false };
  const code = await run(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', join(d, 'out.json')], { io });
  assert.is(code, 1);
  assert.match(err, /error: cannot write .*out\.json: it is a symbolic link/);
  assert.not.match(err, /\n\s+at /);
  assert.is(readFileSync(join(d, 'victim'), 'utf8'), 'precious');
});

s.run();
