/**
 * Files of each kind (docs/cli.md "Conventions"): a Fleet spec or a fleet plan given to a
 * single-cluster command, and a Rollout spec or a plan of one cluster given to a fleet command,
 * is one line naming the command that takes it (exit 1), never the wrong schema's list of
 * missing and unknown fields; and the help names each command's kind.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../support/cli.ts';
import { ROOT } from '../support/built.ts';
import { commandForKind } from '../../src/cli/options.ts';

const s = suite('file kinds');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-kinds-'));
cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
const FLEET = 'examples/fleet/fleet.yaml';
const SPEC = 'examples/rollout.yaml';
const at = { cwd: dir };

s.before(async () => {
  const fp = await cli(['fleet', 'plan', '-f', FLEET, '-o', 'json', '--out', 'fleetplan.json'], at);
  assert.is(fp.code, 0, fp.err);
  const p = await cli(['plan', '-f', SPEC, '--cluster', 'examples/cluster.yaml', '--out', 'plan.json'], at);
  assert.is(p.code, 0, p.err);
});

const cases: [args: string[], line: string][] = [
  [['plan', '-f', FLEET, '--cluster', 'examples/cluster.yaml'], `${FLEET} is a Fleet, not a Rollout spec: use \`bootcplan fleet plan -f ${FLEET}\``],
  [['validate', '-f', FLEET], `${FLEET} is a Fleet, not a Rollout spec: use \`bootcplan fleet validate -f ${FLEET}\``],
  [['show', 'fleetplan.json'], 'fleetplan.json is a fleet plan, not a plan of one cluster: use `bootcplan fleet show fleetplan.json`'],
  [['apply', 'fleetplan.json'], 'fleetplan.json is a fleet plan, not a plan of one cluster: use `bootcplan fleet apply fleetplan.json`'],
  [['rehearse', 'fleetplan.json'], 'fleetplan.json is a fleet plan, not a plan of one cluster: use `bootcplan fleet rehearse fleetplan.json`'],
  [['fleet', 'plan', '-f', SPEC], `${SPEC} is a Rollout spec, not a Fleet: use \`bootcplan plan -f ${SPEC}\``],
  [['fleet', 'validate', '-f', SPEC], `${SPEC} is a Rollout spec, not a Fleet: use \`bootcplan validate -f ${SPEC}\``],
  [['fleet', 'show', 'plan.json'], 'plan.json is a plan of one cluster, not a fleet plan: use `bootcplan show plan.json`'],
  [['fleet', 'apply', 'plan.json', '--auto-approve'], 'plan.json is a plan of one cluster, not a fleet plan: use `bootcplan apply plan.json`'],
  [['show', SPEC], `${SPEC} is a Rollout spec, not a plan of one cluster: use \`bootcplan plan -f ${SPEC}\``],
  [['plan', '-f', 'plan.json', '--cluster', 'examples/cluster.yaml'], 'plan.json is a plan of one cluster, not a Rollout spec: use `bootcplan show plan.json`'],
];

for (const [args, line] of cases) {
  s(`${args.join(' ')}: one line naming the right command, exit 1`, async () => {
    const r = await cli(args, at);
    assert.is(r.code, 1, r.err);
    assert.is(r.err, `error: ${line}\n`);
    assert.is(r.out, '');
  });
}

s('the kubectl plugin names itself in the command it suggests', async () => {
  const r = await cli(['show', 'fleetplan.json'], { ...at, name: 'kubectl bootcplan' });
  assert.is(r.err, 'error: fleetplan.json is a fleet plan, not a plan of one cluster: use `kubectl bootcplan fleet show fleetplan.json`\n');
});

s('a broken file of the right kind still gets every diagnostic', async () => {
  const text = readFileSync(join(dir, SPEC), 'utf8').replace('spec:', 'spec:\n  bogus: 1');
  writeFileSync(join(dir, 'broken.yaml'), text);
  const r = await cli(['plan', '-f', 'broken.yaml', '--cluster', 'examples/cluster.yaml'], at);
  assert.is(r.code, 1);
  assert.match(r.err, /unknown field "bogus"/);
  assert.not.match(r.err, /use `bootcplan/);
});

s('commandForKind: the same verb in the other family, else its reader of that kind', () => {
  assert.is(commandForKind('rehearse', 'Fleet', 'f.yaml'), 'fleet rehearse -f f.yaml');
  assert.is(commandForKind('show', 'Fleet', 'f.yaml'), 'fleet plan -f f.yaml');
  assert.is(commandForKind('fleet render argocd', 'Plan', 'p.json'), 'show p.json');
  assert.is(commandForKind('validate', 'FleetPlan', 'fp.json'), 'fleet show fp.json');
  assert.is(commandForKind('fleet apply', 'Rollout', 'r.yaml'), 'apply -f r.yaml');
});

s.run();
