/**
 * Output files in a shared directory (issue "Sealed plans and hostile input"): the old
 * `--out` wrote through a predictable temp name and followed symbolic links, so another user
 * could make it overwrite their choice of file; it also replaced device files.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync, symlinkSync, mkdirSync, readdirSync, existsSync, lstatSync, statSync, chmodSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBin, ROOT } from '../support/built.ts';
import { InputError } from '../../src/base/errors.ts';
import { writeFileAtomic } from '../../src/app/files.ts';
import { cli } from '../support/cli.ts';

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
  writeFileAtomic(join(d, 'plan.json'), '{"new":true}', 'private');
  assert.is(readFileSync(victim, 'utf8'), 'precious');
  assert.is(readFileSync(join(d, 'plan.json'), 'utf8'), '{"new":true}');
});

s('a symbolic link as the target is refused; the file it points to is untouched', () => {
  const d = dir();
  const victim = join(d, 'victim.txt');
  writeFileSync(victim, 'precious');
  symlinkSync(victim, join(d, 'plan.json'));
  refused(() => writeFileAtomic(join(d, 'plan.json'), 'x', 'private'), /is a symbolic link, and bootcplan replaces only regular files/);
  assert.is(readFileSync(victim, 'utf8'), 'precious');
  assert.ok(lstatSync(join(d, 'plan.json')).isSymbolicLink());
});

s('a directory, a device and a file as a parent directory are clean errors', () => {
  const d = dir();
  mkdirSync(join(d, 'plans.json'));
  refused(() => writeFileAtomic(join(d, 'plans.json'), 'x', 'private'), /it is a directory/);
  refused(() => writeFileAtomic('/dev/null', 'x', 'private'), /not a regular file/);
  writeFileSync(join(d, 'file'), 'x');
  refused(() => writeFileAtomic(join(d, 'file', 'plan.json'), 'x', 'private'), /cannot create the directory/);
});

s('a failed write leaves the old file whole and no temp file behind', () => {
  const d = dir();
  const target = join(d, 'plan.json');
  writeFileSync(target, 'old');
  refused(
    () =>
      writeFileAtomic(target, 'new', 'private', {
        rename: () => {
          throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
        },
      }),
    /cannot write .*: no space left on the device/,
  );
  assert.is(readFileSync(target, 'utf8'), 'old');
  assert.equal(readdirSync(d), ['plan.json']);
});

s('a regular file is replaced whole; a new file and its directory are created', () => {
  const d = dir();
  writeFileSync(join(d, 'plan.json'), 'old content that is longer');
  writeFileAtomic(join(d, 'plan.json'), 'new', 'private');
  assert.is(readFileSync(join(d, 'plan.json'), 'utf8'), 'new');
  writeFileAtomic(join(d, 'deep', 'er', 'plan.json'), 'x', 'private');
  assert.ok(existsSync(join(d, 'deep', 'er', 'plan.json')));
  assert.equal(readdirSync(d).sort(), ['deep', 'plan.json']);
});

s('through the CLI: plan --out onto a symbolic link exits 1 with one line, no stack', async () => {
  const d = dir();
  writeFileSync(join(d, 'victim'), 'precious');
  symlinkSync(join(d, 'victim'), join(d, 'out.json'));
  const { code, err } = await cli(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', join(d, 'out.json')]);
  assert.is(code, 1);
  assert.match(err, /error: cannot write .*out\.json: it is a symbolic link/);
  assert.not.match(err, /\n\s+at /);
  assert.is(readFileSync(join(d, 'victim'), 'utf8'), 'precious');
});

// ---- file modes (docs/cli.md "Output files") ----

const modeOf = (p: string) => statSync(p).mode & 0o777;
const octal = (m: number) => m.toString(8).padStart(4, '0');

/** The installed command, run in `cwd` with umask 022 (the usual one; a test of modes must not depend on the caller's). */
const bin = (args: string[], cwd = ROOT) => runBin(args, { cwd, umask: '022' });

s('replacing a file keeps its mode: a 0600 plan stays 0600 (it became 0644), a 0640 one 0640, a 0666 one 0666', () => {
  const d = dir();
  for (const mode of [0o600, 0o640, 0o666, 0o604]) {
    const target = join(d, `plan-${octal(mode)}.json`);
    writeFileSync(target, 'old');
    chmodSync(target, mode);
    writeFileAtomic(target, 'new', 'private');
    assert.is(readFileSync(target, 'utf8'), 'new');
    assert.is(octal(modeOf(target)), octal(mode));
  }
});

s('a new file is 0600 for plans and snapshots ("private"), 0644 less the umask for rendered manifests ("shared")', () => {
  const d = dir();
  writeFileAtomic(join(d, 'plan.json'), 'x', 'private');
  assert.is(octal(modeOf(join(d, 'plan.json'))), '0600');
  writeFileAtomic(join(d, 'applicationset.yaml'), 'x', 'shared');
  const umask = process.umask(0o022);
  process.umask(umask);
  assert.is(octal(modeOf(join(d, 'applicationset.yaml'))), octal(0o644 & ~umask));
});

s('replacing a file keeps its owner and group where the process may set them (root: any owner)', () => {
  const d = dir();
  const target = join(d, 'plan.json');
  writeFileSync(target, 'old');
  const isRoot = process.getuid?.() === 0;
  const owner = isRoot ? { uid: 4321, gid: 4322 } : { uid: process.getuid!(), gid: process.getgid!() };
  if (isRoot) chownSync(target, owner.uid, owner.gid);
  writeFileAtomic(target, 'new', 'private');
  const st = statSync(target);
  assert.equal({ uid: st.uid, gid: st.gid }, owner);
});

s('through the installed command: plan --out onto a 0600 file keeps 0600; a new plan file is 0600 under umask 022', () => {
  const d = dir();
  const kept = join(d, 'kept.json');
  writeFileSync(kept, '{}');
  chmodSync(kept, 0o600);
  const r = bin(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', kept]);
  assert.is(r.code, 0, r.err);
  assert.is(JSON.parse(readFileSync(kept, 'utf8')).formatVersion, '1.0');
  assert.is(octal(modeOf(kept)), '0600');
  const fresh = join(d, 'fresh.json');
  assert.is(bin(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml', '--out', fresh]).code, 0);
  assert.is(octal(modeOf(fresh)), '0600');
  const fleetPlan = join(d, 'fleet-plan.json');
  assert.is(bin(['fleet', 'plan', '-f', 'examples/fleet/fleet.yaml', '--out', fleetPlan]).code, 0);
  assert.is(octal(modeOf(fleetPlan)), '0600');
});

s.run();
