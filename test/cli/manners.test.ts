/**
 * kubectl/terraform manners (docs/cli.md, docs/design.md §2): `-o` always a format and `--out` always a
 * file, `-o yaml` wherever a document is printed, `-f -` / `--cluster -` from stdin (through the
 * real binary), `-q`/`-v`, and the near command, flag or format suggested on a typo
 * (completion: test/cli/completion.test.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { DriverFactory } from '../../src/app/ports.ts';
import { readStdinText } from '../../src/app/stdin.ts';
import { yamlText } from '../../src/render/yaml.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { runBin } from '../support/built.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { cli, io } from '../support/cli.ts';

const s = suite('cli manners');

/** The installed command (compiled, rebuilt when a source is newer), with `input` on its stdin. */
const bin = (args: string[], input: string) => runBin(args, { input });

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-manners-'));
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 6)).yaml());
const specFile = join(dir, 'bootcplan.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]));

// ---- stdin ----

s('-f - and --cluster - read stdin; the plan is the one the files give; positions name <stdin>', () => {
  const files = bin(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'json'], '');
  assert.is(files.code, 0, files.err);
  const fromFiles = JSON.parse(files.out);
  const spec = bin(['plan', '-f', '-', '--cluster', clusterFile, '-o', 'json'], readFileSync(specFile, 'utf8'));
  assert.is(spec.code, 0, spec.err);
  const fromStdin = JSON.parse(spec.out);
  assert.is(fromStdin.spec.path, '<stdin>');
  assert.equal(fromStdin.waves, fromFiles.waves);
  assert.equal(fromStdin.changes, fromFiles.changes);
  const cluster = bin(['plan', '-f', specFile, '--cluster', '-', '-o', 'json'], readFileSync(clusterFile, 'utf8'));
  assert.is(cluster.code, 0, cluster.err);
  assert.equal(JSON.parse(cluster.out).waves, fromFiles.waves);
  const bad = bin(
    ['validate', '-f', '-'],
    'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata: {name: p}\nspec:\n  pools: [{name: w, image: x, rebootPolcy: RebootOnly}]\n',
  );
  assert.is(bad.code, 1);
  assert.match(bad.err, /error: <stdin>:5:31: spec\.pools\[0\]\.rebootPolcy: unknown field/);
  assert.match(bad.err, /did you mean "rebootPolicy"\?/);
});

s('stdin holds one input: -f - with --cluster - is refused, and so are --out and --ref with -f -', async () => {
  const both = await cli(['plan', '-f', '-', '--cluster', '-']);
  assert.is(both.code, 1);
  assert.match(both.err, /-f - and --cluster - both read stdin/);
  const out = await cli(['plan', '-f', '-', '--cluster', clusterFile, '--out', join(dir, 'p.json')]);
  assert.is(out.code, 1);
  assert.match(out.err, /-f - has none/);
  const ref = await cli(['validate', '-f', '-', '--ref', 'HEAD']);
  assert.is(ref.code, 1);
  assert.match(ref.err, /--ref HEAD reads the spec from git, and -f - from stdin/);
  const apply = await cli(['apply', '-f', '-']);
  assert.is(apply.code, 1);
  assert.match(apply.err, /--auto-approve/);
});

s('stdin is size-capped like input files', () => {
  let calls = 0;
  const endless = (buf: Buffer) => {
    calls++;
    buf.fill(0x61);
    return buf.length;
  };
  assert.throws(() => readStdinText('spec', 1 << 20, undefined, endless), /spec on stdin is more than bootcplan reads \(1 MiB\)/);
  assert.ok(calls <= 17, `stops reading at the cap (${calls} reads)`);
  const chunks = ['a: ', '1\n'];
  assert.is(
    readStdinText('spec', 100, undefined, (buf) => {
      const c = chunks.shift();
      if (!c) return 0;
      buf.write(c);
      return c.length;
    }),
    'a: 1\n',
  );
});

// ---- -o is a format, --out a file ----

s('-o yaml prints the same document as -o json: plan, show and rehearse', async () => {
  const json = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'json']);
  const yaml = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'yaml']);
  assert.is(yaml.code, 0, yaml.err);
  assert.equal(parse(yaml.out), JSON.parse(json.out));
  const saved = join(dir, 'saved.json');
  assert.is((await cli(['plan', '-f', specFile, '--cluster', clusterFile, '--out', saved])).code, 0);
  assert.equal(parse((await cli(['show', saved, '-o', 'yaml'])).out), JSON.parse(readFileSync(saved, 'utf8')));
  const rj = await cli(['rehearse', '-f', specFile, '--cluster', clusterFile, '-o', 'json']);
  const ry = await cli(['rehearse', '-f', specFile, '--cluster', clusterFile, '-o', 'yaml']);
  assert.is(ry.code, 0, ry.err);
  assert.equal(parse(ry.out), JSON.parse(rj.out));
});

s('-o yaml escapes what a terminal would act on (bidi, C1, DEL), and reads back as the exact value', () => {
  const value = { 'node\u202e-1': ['x\u202ey', 'e\x1b[31m', '\u0085', '\u007f', 'plain', 'yes'], n: 1 };
  const text = yamlText(value);
  assert.not.match(text, /[\u007f-\u009f\u202e\x1b]/);
  assert.match(text, /"node\\u202e-1":/);
  assert.equal(parse(text), value);
});

s('snapshot: -o is the format; the old -o FILE is refused with the --out spelling as the hint', async () => {
  for (const file of ['snap.yaml', 'snap.json']) {
    const r = await cli(['snapshot', '-o', file]);
    assert.is(r.code, 1);
    assert.match(r.err, new RegExp(`-o names the format now; write the snapshot to a file with --out ${file.replace('.', '\\.')}`));
  }
});

s('status -o json|yaml and apply -o json (the --json spelling still works)', async () => {
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile));
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'manners@test' });
  const step = await cli(['apply', '-f', specFile, '--auto-approve', '--step', '-o', 'json'], { openDriver });
  assert.is(step.code, 0, step.err);
  const events = step.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  // The demo's worker nodes are still staging: --step ends with the wait it records (exit 0).
  assert.equal(
    events
      .map((e) => e.type)
      .filter((t) => t === 'start' || t === 'wait' || t === 'step-end')
      .slice(0, 1),
    ['start'],
  );
  assert.ok(['step-end', 'wait'].includes(events[events.length - 1].type), events[events.length - 1].type);
  const alias = await cli(['apply', '-f', specFile, '--auto-approve', '--step', '--json'], { openDriver });
  assert.is(alias.code, 0, alias.err);
  assert.ok(
    alias.out
      .trim()
      .split('\n')
      .every((l) => typeof JSON.parse(l).type === 'string'),
  );
  const j = await cli(['status', '-o', 'json'], { openDriver });
  const y = await cli(['status', '-o', 'yaml'], { openDriver });
  assert.is(y.code, 0, y.err);
  assert.equal(parse(y.out), JSON.parse(j.out));
  assert.ok(JSON.parse(j.out).progress, 'the progress of the apply');
  assert.equal(JSON.parse((await cli(['status', '--json'], { openDriver })).out), JSON.parse(j.out));
  assert.match((await cli(['status'], { openDriver })).out, /wave\(s\) finished/);
});

// ---- suggestions ----

s('a mistyped command, flag or format names the near one', async () => {
  const cmd = await cli(['plna']);
  assert.is(cmd.code, 1);
  assert.match(cmd.err, /unknown command 'plna'\n\(Did you mean plan\?\)/);
  const flag = await cli(['plan', '--clustr', clusterFile]);
  assert.is(flag.code, 1);
  assert.match(flag.err, /unknown option '--clustr'\n\(Did you mean --cluster\?\)/);
  const fmt = await cli(['plan', '-f', specFile, '--cluster', clusterFile, '-o', 'ymal']);
  assert.is(fmt.code, 1);
  assert.match(fmt.err, /Allowed formats are text, json, yaml, markdown, html; did you mean yaml\?/);
});

/** `word` with its 2nd and 3rd letters swapped: yaml -> ymal, bash -> bsah. */
const typo = (word: string) => word[0] + word[2] + word[1] + word.slice(3);

s('every closed-choice option and argument of every command: a typo says "did you mean X?", exit 1, one screen', async () => {
  const { commandFlags } = await import('../support/hint-flags.ts');
  const { buildProgram } = await import('../../src/cli/main.ts');
  const program = buildProgram(
    {
      io: io({ env: {} }),
      openDriver: async () => {
        throw new Error('not reached');
      },
      now: () => 0,
    },
    () => {},
  );
  type Node = {
    name(): string;
    commands: Node[];
    options: { flags: string; short?: string; long?: string; argChoices?: string[] }[];
    registeredArguments: { name(): string; required: boolean; argChoices?: string[] }[];
  };
  const cases: { args: string[]; choice: string }[] = [];
  const walk = (c: Node, path: string[]) => {
    for (const o of c.options)
      for (const choice of o.argChoices ?? []) if (choice.length > 3) cases.push({ args: [...path, o.short ?? o.long!, typo(choice)], choice });
    for (const a of c.registeredArguments)
      for (const choice of a.argChoices ?? []) if (choice.length > 3) cases.push({ args: [...path, typo(choice)], choice });
    for (const sub of c.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program as unknown as Node, []);
  assert.ok(commandFlags().size > 15);
  const commands = new Set(cases.map((x) => x.args.slice(0, -2).join(' ')));
  for (const needed of ['plan', 'show', 'snapshot', 'status', 'rehearse', 'fleet plan', 'version'])
    assert.ok(commands.has(needed), `${needed} -o is a closed choice`);
  assert.ok(
    cases.some((x) => x.args[0] === 'completion'),
    'completion SHELL is a closed choice',
  );
  for (const { args, choice } of cases) {
    // The choice is checked before anything is read, so no file has to exist.
    const r = await cli(args);
    assert.is(r.code, 1, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, new RegExp(`did you mean ${choice}\\?`), `${args.join(' ')}: ${r.err}`);
    assert.ok(r.err.trim().split('\n').length <= 3, `${args.join(' ')}: one screen:\n${r.err}`);
  }
  // The installed command says the same.
  const built = bin(['snapshot', '-o', 'ymal'], '');
  assert.is(built.code, 1);
  assert.match(built.err, /did you mean yaml\?/);
});

// ---- -q / -v ----

s('-q: only errors on stderr; -v: the exit and the time taken; both at once is an error', async () => {
  const warnSpec = join(dir, 'warn.yaml');
  writeFileSync(warnSpec, specYaml([{ name: 'worker', image: NEW }]) + '  managedBootImages:\n    machineManagers: []\n');
  const loud = await cli(['validate', '-f', warnSpec]);
  assert.is(loud.code, 0, loud.err);
  assert.match(loud.err, /warning: .*legacy/);
  const quiet = await cli(['validate', '-q', '-f', warnSpec]);
  assert.is(quiet.code, 0);
  assert.is(quiet.err, '');
  assert.match(quiet.out, /valid/);
  const quietError = await cli(['-q', 'validate', '-f', join(dir, 'missing.yaml')]);
  assert.is(quietError.code, 1);
  assert.match(quietError.err, /error: spec .*missing\.yaml does not exist/);
  const verbose = await cli(['plan', '-v', '-f', specFile, '--cluster', clusterFile]);
  assert.is(verbose.code, 0);
  assert.match(verbose.err, /bootcplan plan: exit 0 after \d+\.\d\ds/);
  assert.is((await cli(['plan', '-q', '-v', '-f', specFile, '--cluster', clusterFile])).code, 1);
});

s.run();
