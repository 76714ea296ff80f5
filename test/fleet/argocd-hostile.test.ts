/**
 * `fleet render argocd` under attack (docs/safety.md "`fleet render` never deletes what it did not write"): a fleet plan is input (its id is a content
 * hash, not a signature), and so are the flags. A cluster name that is not a DNS-1123 label,
 * a path that leaves the repository, a destination with a newline or template braces: each is
 * refused with a message naming it, or written so that every YAML parser reads back exactly
 * the value; never a document that parses into something else.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { argoRenderProblems, renderFleetArgo, type ArgoFleetOptions } from '../../src/fleet/argocd.ts';
import { testFleet, renamed, withCluster, TEST_OPTIONS, type ArgoTestCluster } from '../support/fleet-argocd.ts';
import type { ArgoFleetInput } from '../../src/fleet/argocd.ts';

const s = suite('fleet render argocd under attack');

const fleet = (clusters: ArgoTestCluster[]) => testFleet(clusters, 2);
const problems = (input: ArgoFleetInput, o: Partial<ArgoFleetOptions> = {}) => argoRenderProblems(input, { ...TEST_OPTIONS, ...o });
const BASE = fleet([{ name: 'a', canary: true }, { name: 'b' }]);

/** Every YAML file of a render parses, document by document, without errors. */
function parsedFiles(input: ArgoFleetInput, o: Partial<ArgoFleetOptions> = {}) {
  const r = renderFleetArgo(input, { ...TEST_OPTIONS, ...o });
  const out: Record<string, unknown[]> = {};
  for (const f of r.files.filter((f) => f.path.endsWith('.yaml') && !f.path.endsWith('fleet.yaml'))) {
    const docs = parseAllDocuments(f.content);
    for (const d of docs) assert.equal(d.errors, [], f.path);
    out[f.path] = docs.map((d) => d.toJS());
  }
  return out;
}

s('cluster names that are not DNS-1123 labels are refused, each named, before anything is written', () => {
  const hostile = ['../../etc', 'a/b', 'UPPER', 'x'.repeat(64), 'a\nb: c', '{{.cluster}}', '-lead', 'trail-', 'a.b', 'café', 'rlo\u202eevil', ''];
  for (const name of hostile) {
    for (const which of ['a', 'b']) {
      const crafted = renamed(BASE, which, name);
      const ps = problems(crafted);
      assert.ok(
        ps.some((p) => p.startsWith(`cluster ${JSON.stringify(name).slice(0, 80)} is not a DNS-1123 label`)),
        `${JSON.stringify(name)}: ${ps.join(' | ')}`,
      );
      assert.throws(() => renderFleetArgo(crafted, TEST_OPTIONS), /is not a DNS-1123 label/);
    }
  }
  assert.equal(problems(fleet([{ name: 'east-1', canary: true }, { name: '0-a' }, { name: 'x'.repeat(63) }])), []);
});

s('paths that leave the repository are refused: --path, --setup-path and the Fleet file path of a crafted fleet plan', () => {
  for (const bad of ['../x', '/abs', 'a/../../b', 'a//b', 'a\\b', 'a/./b', '', 'a\nb']) {
    assert.ok(
      problems(BASE, { path: bad }).some((p) => p.startsWith('--path ')),
      JSON.stringify(bad),
    );
    assert.ok(
      problems(BASE, { setupPath: bad }).some((p) => p.startsWith('--setup-path ')),
      JSON.stringify(bad),
    );
    const crafted = { ...BASE, fleetPlan: { ...BASE.fleetPlan, fleet: { ...BASE.fleetPlan.fleet, path: bad } } };
    assert.ok(
      problems(crafted).some((p) => p.startsWith("the Fleet file's path")),
      JSON.stringify(bad),
    );
  }
});

s('flags with white space or control characters are refused; names that Kubernetes would reject are refused', () => {
  const fp = BASE;
  assert.ok(problems(fp, { repoURL: 'https://x\n  evil: 1' }).some((p) => p.startsWith('--repo-url')));
  assert.ok(problems(fp, { revision: 'main\u202e' }).some((p) => p.startsWith('--revision')));
  assert.ok(problems(fp, { image: 'a b' }).some((p) => p.startsWith('--image')));
  assert.ok(problems(fp, { name: 'Bad_Name' }).some((p) => p.startsWith('ApplicationSet name')));
  assert.ok(problems(fp, { namespace: 'a.b' }).some((p) => p.startsWith('namespace')));
});

s('a destination with a newline, quotes, YAML or template syntax is refused (control characters) or written back exactly', () => {
  const odd = ['prod: {evil: 1}', '"; rm -rf /', '{{.cluster}}', "it's # not a comment", '- item', '&anchor *alias', '!!binary x'];
  for (const name of odd) {
    const crafted = withCluster(BASE, 'a', { destination: { name, server: null } });
    assert.equal(problems(crafted), [], name);
    const files = parsedFiles(crafted);
    const set = files['applicationset.yaml'][0] as any;
    assert.is(set.spec.generators[0].list.elements[0].destinationName, name);
  }
  const server = withCluster(BASE, 'a', { destination: { name: null, server: 'https://api.example.com:6443\n  x: y' } });
  assert.ok(problems(server).some((p) => /destination .* control characters/.test(p)));
  const both = withCluster(BASE, 'a', { destination: { name: 'a', server: 'https://api.example.com:6443' } });
  assert.ok(problems(both).some((p) => /both name and server/.test(p)));
});

s('a crafted fleet plan: a batch naming an unknown cluster, a batched cluster without a plan, a canary with an error', () => {
  const fp = BASE.fleetPlan;
  assert.ok(
    problems({ ...BASE, fleetPlan: { ...fp, batches: [...fp.batches, { index: 9, kind: 'batch', clusters: ['ghost'], estimatedSeconds: 1 }] } }).some((p) =>
      /cluster "ghost", which the fleet plan does not hold/.test(p),
    ),
  );
  assert.ok(problems(withCluster(BASE, 'b', { plan: null })).some((p) => /cluster "b" is in batch 2 without a plan/.test(p)));
  assert.ok(
    problems(withCluster(BASE, 'a', { plan: null, error: { code: 'unreachable', message: 'x' } })).some((p) => /canary "a" has no plan without errors/.test(p)),
  );
  const other = withCluster(BASE, 'b', { plan: { ...fp.clusters[1].plan!, spec: { ...fp.clusters[1].plan!.spec, sha256: '0'.repeat(64) } } });
  assert.ok(problems(other).some((p) => /cluster "b": its plan was not made from the fleet plan's Fleet file/.test(p)));
});

s.run();
