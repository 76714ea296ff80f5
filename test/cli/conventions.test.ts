/**
 * The conventions a Terraform or kubectl user reaches for (docs/cli.md "Conventions"):
 * `--no-color` on every command (NO_COLOR's meaning, over FORCE_COLOR), and Terraform's
 * single-dash long flags (`-out=F`, `-no-color`, `-json`) refused with bootcplan's spelling,
 * rather than read as short flags (`-o ut=F`).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../support/cli.ts';
import { ROOT } from '../support/built.ts';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import type { DriverFactory } from '../../src/app/ports.ts';
import { newSim } from '../support/apply.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.ts';
import { io } from '../support/cli.ts';

const s = suite('conventions');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-conventions-'));
cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
const at = { cwd: dir };
const PLAN = ['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml'];
const ESC = '\u001b[';

s('--no-color: no escape codes even with FORCE_COLOR, before or after the command; ASCII symbols as with NO_COLOR', async () => {
  const coloured = await cli(PLAN, { ...at, io: { env: { FORCE_COLOR: '1' } } });
  assert.is(coloured.code, 0, coloured.err);
  assert.ok(coloured.out.includes(ESC), 'FORCE_COLOR colours the plan (the check can fail)');
  const noColor = await cli(PLAN, { ...at, io: { env: { NO_COLOR: '1' } } });
  for (const args of [
    [...PLAN, '--no-color'],
    ['--no-color', ...PLAN],
  ]) {
    const r = await cli(args, { ...at, io: { env: { FORCE_COLOR: '1' } } });
    assert.is(r.code, 0, r.err);
    assert.not.ok(r.out.includes(ESC), args.join(' '));
    assert.is(r.out, noColor.out, 'the same output as NO_COLOR=1');
  }
});

s('--no-color is accepted by every command (a global flag)', async () => {
  for (const args of [['validate', '-f', 'examples/rollout.yaml'], ['fleet', 'validate', '-f', 'examples/fleet/fleet.yaml'], ['version']]) {
    const r = await cli([...args, '--no-color'], at);
    assert.is(r.code, 0, `${args.join(' ')}: ${r.err}`);
  }
});

const TERRAFORM: [word: string, right: string][] = [
  ['-out=plan.json', '--out=plan.json'],
  ['-out', '--out'],
  ['-no-color', '--no-color'],
  ['-json', '-o json'],
  ['-auto-approve', '--auto-approve'],
  ['-detailed-exitcode', '--detailed-exitcode'],
];

for (const [word, right] of TERRAFORM) {
  s(`${word}: refused with bootcplan's spelling (${right}), exit 1, nothing written`, async () => {
    const r = await cli([...PLAN, word], at);
    assert.is(r.code, 1, r.err);
    const lines = r.err.trimEnd().split('\n');
    assert.is(lines.length, 2, r.err);
    assert.match(
      lines[0],
      new RegExp(`^error: ${word.replace(/[.]/g, '\\.')}: long flags take two dashes here \\(${word.replace(/[.]/g, '\\.')} is Terraform's spelling`),
    );
    assert.is(lines[1], `  hint: use ${right}`);
    assert.is(r.out, '');
    assert.not.ok(existsSync(join(dir, 'plan.json')) || readdirSync(dir).some((f) => f.startsWith('ut=')), 'no file written');
  });
}

s('short flags keep their meaning: -o json, -qv (refused as a pair), -f - ; a word after -- is not a flag', async () => {
  const json = await cli([...PLAN, '-o', 'json'], at);
  assert.is(json.code, 0, json.err);
  JSON.parse(json.out);
  const qv = await cli([...PLAN, '-qv'], at);
  assert.match(qv.err, /-q and -v contradict each other/);
  const attached = await cli([...PLAN, '-ojson'], at);
  assert.is(attached.code, 0, attached.err);
  const afterDashes = await cli(['completion', '--', '-out'], at);
  assert.not.match(afterDashes.err, /long flags take two dashes/);
});

/** Each command's `-o` choices, by its path (`fleet show`). */
function outputChoices(): Map<string, readonly string[]> {
  const program = buildProgram({ io: io(), openDriver: async () => Promise.reject(new Error('no cluster')), now: () => 0 }, () => {});
  const out = new Map<string, readonly string[]>();
  const walk = (c: Command, path: string[]) => {
    const o = c.options.find((x) => x.long === '--output');
    if (o?.argChoices) out.set(path.join(' '), o.argChoices);
    for (const sub of c.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}

/** The commands that print data, each with -o. */
const DATA_COMMANDS = ['plan', 'show', 'snapshot', 'apply', 'rehearse', 'status', 'fleet plan', 'fleet show', 'fleet apply', 'fleet rehearse', 'version'];

s('-o: every command that prints data offers text, json and yaml first, the event streams too; a snapshot (no text form) yaml and json', () => {
  const choices = outputChoices();
  assert.equal([...choices.keys()].sort(), [...DATA_COMMANDS].sort());
  for (const [command, list] of choices) {
    if (command === 'snapshot') assert.equal([...list], ['yaml', 'json'], command);
    else assert.equal(list.slice(0, 3), ['text', 'json', 'yaml'], `${command} -o: ${list.join(', ')}`);
  }
});

s('apply -o yaml: the events -o json prints, one YAML document each; status -o yaml: the document -o json prints', async () => {
  const out = async (format: string) => {
    const sim = newSim(readSnapshotFile(nodeInputs, join(dir, 'examples/cluster.yaml')));
    const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'conventions@test' });
    const apply = await cli(['apply', '-f', 'examples/rollout.yaml', '--auto-approve', '--step', '-o', format], { ...at, openDriver });
    assert.is(apply.code, 0, apply.err);
    const status = await cli(['status', '-o', format], { ...at, openDriver });
    assert.is(status.code, 0, status.err);
    return { apply: apply.out, status: status.out };
  };
  const json = await out('json');
  const yaml = await out('yaml');
  const events = json.apply
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.ok(events.length > 2, json.apply);
  assert.ok(yaml.apply.startsWith('---\n'), yaml.apply.slice(0, 80));
  const docs = parseAllDocuments(yaml.apply).map((d) => d.toJS());
  assert.equal(strip(docs), strip(events));
  assert.equal(parseYaml(yaml.status), JSON.parse(json.status));
});

/** Wall-clock figures of a run (how long a step took on this machine) differ between two runs. */
function strip(events: Record<string, unknown>[]): unknown[] {
  return events.map((e) => JSON.parse(JSON.stringify(e, (k, v) => (/(ms|Ms|elapsed)$/.test(k) ? 0 : v))));
}

s('fleet plan, fleet show and fleet rehearse -o yaml: the value -o json prints', async () => {
  const saved = await cli(['fleet', 'plan', '-f', 'examples/fleet/fleet.yaml', '--out', 'fp.json'], at);
  assert.is(saved.code, 0, saved.err);
  for (const args of [
    ['fleet', 'show', 'fp.json'],
    // A fixed start: the rehearsal waits from its start for each cluster's window.
    ['fleet', 'rehearse', 'fp.json', '--start', '2026-12-07T12:00:00Z'],
  ]) {
    const json = await cli([...args, '-o', 'json'], at);
    const yaml = await cli([...args, '-o', 'yaml'], at);
    assert.is(yaml.code, 0, yaml.err);
    assert.equal(parseYaml(yaml.out), JSON.parse(json.out), args.join(' '));
  }
});

s.run();
