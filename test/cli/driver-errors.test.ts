/**
 * The driver's errors (src/apply/ports/driver.ts) are bootcplan's named errors: each carries its exit
 * code (docs/design.md §3: 1, a cluster failure) and a hint of its own, and the CLI prints that hint
 * (docs/cli.md "Errors"). A cluster that keeps answering a write with a conflict, through
 * `bootcplan apply` on the simulator, ends in one screen: the error, its hint, exit 1. Every
 * error class of src/ extends NamedError (src/base/errors.ts), so its `name` is its class's and
 * none sets it by hand: read from the syntax tree of src/.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { run } from '../../src/cli/main.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { BootcplanError, EXIT, NamedError } from '../../src/base/errors.ts';
import {
  DriverError,
  ConflictError,
  PreconditionFailedError,
  NotFoundError,
  AlreadyExistsError,
  DrainTimeoutError,
  LockLostError,
  ProgressMovedError,
} from '../../src/apply/ports/driver.ts';
import { KubeApiError, KubeRequestError } from '../../src/kube/api-errors.ts';
import { HealthRequestError } from '../../src/kube/prometheus-answers.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { cli } from '../support/cli.ts';

const s = suite('driver errors: exit code and hint');

const dir = mkdtempSync(join(tmpdir(), 'bootcplan-driver-errors-'));
const clusterFile = join(dir, 'cluster.yaml');
writeFileSync(clusterFile, new ClusterBuilder().bootcPool('worker', nodes('w', 4)).yaml());
const specFile = join(dir, 'bootcplan.yaml');
writeFileSync(specFile, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]));

s('apply against a cluster whose writes keep conflicting: the conflict, its own hint, exit 1', async () => {
  const sim = newSim(readSnapshotFile(nodeInputs, clusterFile), { faults: { seed: 3, conflictRate: 1 } });
  const r = await cli(['apply', '-f', specFile, '--auto-approve'], { entry: run, openDriver: async () => ({ driver: sim.driver(), holder: 'errors@test' }) });
  assert.is(r.code, EXIT.error, r.err);
  assert.match(r.err, /^error: Operation cannot be fulfilled on /m);
  assert.match(r.err, new RegExp(`^  hint: ${escape(new ConflictError('x').hint!)}$`, 'm'), r.err);
  assert.not.match(r.err, /internal error|\n\s+at /);
});

const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

s('every driver error is a BootcplanError with exit code 1, its class name and a hint of its own', () => {
  const errors = [
    new DriverError('m'),
    new ConflictError('m'),
    new PreconditionFailedError('m', '/spec'),
    new NotFoundError('m'),
    new AlreadyExistsError('m'),
    new DrainTimeoutError('m'),
    new LockLostError('m'),
    new ProgressMovedError('m'),
  ];
  for (const e of errors) {
    assert.instance(e, BootcplanError);
    assert.is(e.exitCode, EXIT.error, e.name);
    assert.is(e.name, e.constructor.name);
    assert.ok(e.hint && e.hint.length > 10, `${e.name}: no hint`);
  }
  const hints = errors.map((e) => e.hint);
  assert.is(new Set(hints.slice(1, 6)).size, 5, 'the specific errors say what to do about each');
});

s('the API and request errors of src/kube are BootcplanErrors that print the hint they carry', async () => {
  for (const e of [
    new KubeApiError('GET /api/v1/nodes: forbidden', 403, 'Forbidden', 'the account lacks a permission'),
    new KubeRequestError('cannot reach', 'unreachable', 'GET /', 'check that the cluster is up'),
  ]) {
    assert.instance(e, BootcplanError);
    assert.is(e.name, e.constructor.name);
    const r = await cli(['status'], {
      entry: run,
      openDriver: async () => {
        throw e;
      },
    });
    assert.is(r.code, EXIT.error);
    assert.match(r.err, new RegExp(`^  hint: ${escape(e.hint!)}$`, 'm'), r.err);
  }
});

/** Every `.ts` file below `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** The classes of a source file that extend a built-in error or set `this.name` themselves, as "file: what". */
function outsideTheHierarchy(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isClassLike(n)) {
      const base = n.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression.getText(sf);
      if (base && /^(?:Error|TypeError|RangeError|SyntaxError|AggregateError)$/.test(base))
        out.push(`${file}: ${n.name?.text ?? '(anonymous)'} extends ${base}`);
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && n.left.getText(sf) === 'this.name')
      out.push(`${file}: sets this.name`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

s('every error class of src/ is a NamedError: only NamedError extends Error, and only it sets `name`', () => {
  const found = sources('src').flatMap((p) => outsideTheHierarchy(relative('.', p), readFileSync(p, 'utf8')));
  assert.equal(found, ['src/base/errors.ts: NamedError extends Error', 'src/base/errors.ts: sets this.name']);
  const e = new HealthRequestError('timeout', 'no answer');
  assert.instance(e, NamedError);
  assert.is(e.name, 'HealthRequestError');
});

s.run();
