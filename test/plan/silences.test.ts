/**
 * The silences of the plan (src/plan/silences.ts; docs/spec.md "Silences"): one entry per section
 * of the spec with the pools it covers, a pool's own section replacing the Rollout's whole, a
 * section switched off covering nothing, and the matchers of one node's silences: one silence per
 * template, the node's name quoted inside a regular expression so that it matches only itself.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { planSilences, silencesFor, nodeSilences, OPENSHIFT_ALERTMANAGER_URL } from '../../src/plan/silences.ts';
import { MatcherSet } from '../../src/domain/alert-matchers.ts';
import type { DiagnosticInput } from '../../src/base/diagnostics.ts';
import type { PlanPool } from '../../src/plan/types.ts';
import { ClusterBuilder, nodes, NEW } from '../support/cluster.ts';

const t = suite('plan: silences');

const specOf = (spec: Record<string, unknown>) => {
  const loaded = parseRolloutSpec(stringify({ apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 't' }, spec }), 's.yaml');
  if (!loaded.spec) throw new Error(JSON.stringify(loaded.diagnostics));
  return loaded.spec;
};
/** The planner reads only the names of the planned pools. */
const planned = (...names: string[]) => names.map((name) => ({ name }) as PlanPool);
const cluster = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).bootcPool('infra', nodes('i', 2)).bootcPool('gpu', nodes('g', 1)).snapshot();

t('pools that share the Rollout section are one entry; a pool of its own is another', () => {
  const found: DiagnosticInput[] = [];
  const spec = specOf({
    silences: { matchers: ['node="{node}"'] },
    pools: [
      { name: 'worker', image: NEW },
      { name: 'infra', image: NEW },
      { name: 'gpu', image: NEW, silences: { alertmanager: { url: 'https://am.example:9094' }, matchers: ['instance=~"{node}(:.*)?"'], ttlMinutes: 5 } },
    ],
  });
  const out = planSilences(spec, cluster, planned('worker', 'infra', 'gpu'), (d) => found.push(d));
  assert.equal(found, []);
  assert.equal(
    out.map((s) => [s.alertmanager.url, s.matchers, s.ttlMinutes, s.pools]),
    [
      [OPENSHIFT_ALERTMANAGER_URL, ['node="{node}"'], 10, ['worker', 'infra']],
      ['https://am.example:9094', ['instance=~"{node}(:.*)?"'], 5, ['gpu']],
    ],
  );
  const plan = { silences: out };
  assert.is(silencesFor(plan, 'infra'), out[0]);
  assert.is(silencesFor(plan, 'gpu'), out[1]);
  assert.is(silencesFor(plan, 'master'), null);
});

t('a pool not in the plan, or whose section is off, gets no silence', () => {
  const spec = specOf({
    silences: { matchers: ['node="{node}"'] },
    pools: [
      { name: 'worker', image: NEW },
      { name: 'infra', image: NEW, silences: { enabled: false } },
    ],
  });
  const out = planSilences(spec, cluster, planned('infra'), () => {});
  assert.equal(out, []);
});

t('off OpenShift the URL is required: an error at the section, and no entry', () => {
  const plain = { ...cluster, clusterVersion: null };
  const found: DiagnosticInput[] = [];
  const out = planSilences(specOf({ silences: { matchers: ['node="{node}"'] }, pools: [{ name: 'worker', image: NEW }] }), plain, planned('worker'), (d) =>
    found.push(d),
  );
  assert.equal(out, []);
  assert.equal(
    found.map((d) => [d.code, d.path]),
    [['alertmanager-url-required', 'spec.silences.alertmanager']],
  );
});

t("a node's silences: one per template, its name matching only itself", () => {
  const section = {
    alertmanager: { url: 'https://am.example:9094', auth: 'none' as const, ca: 'system' as const },
    matchers: ['node="{node}"', 'instance=~"{node}(:.*)?"'],
    ttlMinutes: 10,
    pools: ['worker'],
  };
  const silences = nodeSilences(section, { node: 'w-1.lab', pool: 'worker' });
  assert.equal(silences, [[{ label: 'node', op: '=', value: 'w-1.lab' }], [{ label: 'instance', op: '=~', value: 'w-1\\.lab(:.*)?' }]]);
  const byInstance = new MatcherSet(silences[1]);
  assert.ok(byInstance.test({ instance: 'w-1.lab:9100' }));
  assert.not.ok(byInstance.test({ instance: 'w-1xlab:9100' }), 'the dot of the name is quoted');
  assert.not.ok(byInstance.test({ instance: 'w-10.lab:9100' }));
});

t.run();
