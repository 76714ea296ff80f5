/**
 * The fleet plan's renderers (docs/fleets.md "The pull-request comment"): one pull-request comment for the whole fleet, summary
 * first, every failed cluster kept, per-cluster details folded and cut first, within 60,000
 * characters for 500 clusters.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderFleetMarkdown, fleetMarkdownMarker } from '../../src/fleet/plan-markdown.ts';
import { renderFleetText } from '../../src/fleet/plan-text.ts';
import { MARKDOWN_LIMIT } from '../../src/render/markdown.ts';
import { FleetBuilder, workerCluster, NEW } from '../support/fleet.ts';

const s = suite('fleet renderers');

function bigFleet(count: number, failing: number) {
  const b = new FleetBuilder();
  b.name = 'edge-sites';
  for (let i = 0; i < count; i++) {
    const name = `site-${String(i).padStart(3, '0')}`;
    const labels = { region: ['eu', 'us', 'ap'][i % 3], tier: i % 2 ? 'prod' : 'staging' };
    if (i >= count - failing)
      b.cluster(name, {
        labels,
        error: { code: 'unreachable', message: `dial tcp 10.0.${i % 256}.1:6443: connect: connection refused`, hint: 'check that the cluster answers' },
      });
    else b.cluster(name, { labels, cluster: workerCluster(3, `n${i}`) });
  }
  return b.strategy({ canaries: ['site-000', 'site-001'], maxConcurrency: '10%', batchSoakSeconds: 600 });
}

s('500 clusters: one comment within 60,000 characters; summary first, every failed cluster named, details cut with a note', () => {
  const fp = bigFleet(500, 30).plan();
  const md = renderFleetMarkdown(fp);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length}`);
  const lines = md.split('\n');
  assert.is(lines[0], '<!-- bootcplan:fleet spec=fleet.yaml -->');
  assert.match(lines[1], /^### ❌ bootcplan fleet plan for `edge-sites`$/);
  assert.ok(md.indexOf('| Summary | |') < md.indexOf('#### ❌ 30 clusters failed'));
  assert.ok(md.indexOf('#### ❌ 30 clusters failed') < md.indexOf('#### Batches'));
  for (let i = 470; i < 500; i++) assert.match(md, new RegExp(`\`site-${i}\``), `site-${i}`);
  assert.match(md, /\| 1 \| canary \| site-000 \|/);
  assert.match(md, /\| Batches \| 13: 2 canaries first, then up to 46 clusters each \(maxConcurrency 10%\) \|/);
  assert.match(md, /cluster details left out to stay within 60,000 characters: `bootcplan fleet show FLEETPLAN --cluster NAME`/);
  assert.match(md, /<details><summary>Clusters \(500\)<\/summary>/);
  assert.match(md, /<details><summary>site-000 \(canary\) · batch 1: /, "the canaries' details come first");
});

s("a small fleet: every cluster's details, no note; the text names batches, clusters and errors", () => {
  const fp = bigFleet(6, 1).plan();
  const md = renderFleetMarkdown(fp);
  assert.not.match(md, /left out/);
  assert.is((md.match(/<details><summary>site-/g) ?? []).length, 5);
  const text = renderFleetText(fp);
  assert.match(text, /Errors:\n {2}site-005: unreachable: dial tcp 10\.0\.5\.1:6443: connect: connection refused\n {4}hint: check that the cluster answers/);
  assert.match(text, /Fleet: 5 of 6 clusters planned, 5 with changes; 15 nodes in 5 batches \(est\. .*\)\. 1 cluster failed\.$/m);
});

s('the marker is keyed by the Fleet path, and data cannot mention, link or end the comment', () => {
  assert.is(fleetMarkdownMarker({ fleet: { path: './fleets/prod --> x.yaml' } as never }), '<!-- bootcplan:fleet spec=fleets/prod_-__x.yaml -->');
  const fp = bigFleet(3, 1).plan();
  fp.clusters[2].error!.message = '@admin see #12 <!-- -->';
  const md = renderFleetMarkdown(fp);
  assert.not.match(md, /@admin/);
  assert.not.match(md, /#12/);
  assert.is(md.split('<!--').length, 2);
});

s('a failed canary is said to stop the fleet, in the text and in the comment', () => {
  const fp = new FleetBuilder()
    .cluster('can', { error: { code: 'unreachable', message: 'no route to host' } })
    .cluster('b')
    .strategy({ canaries: ['can'] })
    .plan();
  assert.equal(
    fp.batches.map((b) => [b.kind, b.clusters]),
    [['batch', ['b']]],
  );
  assert.match(renderFleetText(fp), /1 cluster failed, a canary among them: the fleet cannot be applied\.\n$/);
  assert.match(renderFleetMarkdown(fp), /#### ❌ 1 cluster failed: a canary failed, the fleet cannot be applied/);
});

const BAD = 'quay.io/attacker/os@sha256:bad0000000000000000000000000000000000000000000000000000000000bad';

/** The reviewer's fleet4: store-berlin's own override points it at another image, 100% at once. */
function overriddenFleet() {
  return new FleetBuilder()
    .withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: '40%' }], maintenanceWindows: [{ schedule: '0 22 * * 1-5', duration: '6h' }] })
    .cluster('store-nyc', { labels: { region: 'us' } })
    .cluster('store-berlin', { labels: { region: 'eu' }, overrides: { pools: [{ name: 'worker', image: BAD, maxUnavailable: '100%' }] } })
    .cluster('store-singapore', { labels: { region: 'ap' } })
    .override({ clusterSelector: { matchLabels: { region: 'ap' } }, timezone: 'Asia/Singapore', pools: [{ name: 'worker', paused: true }] })
    .strategy({ canaries: ['store-nyc'], maxConcurrency: 2 });
}

/** The comment's head: everything before the first folded block (never cut). */
const headOf = (md: string) => md.slice(0, md.indexOf('<details>'));
const rowWith = (text: string, ...parts: string[]) => text.split('\n').find((l) => parts.every((p) => l.includes(p)));

s(
  "an override that changes a cluster's image and maxUnavailable is named in the comment's head: cluster, field, shared value, its value, which override",
  () => {
    const fp = overriddenFleet().plan();
    const head = headOf(renderFleetMarkdown(fp));
    assert.match(head, /#### ⚠️ Overrides: 2 clusters differ from the shared rollout/);
    assert.ok(rowWith(head, '`pools.worker.image`', `\`${NEW}\``, `\`${BAD}\``, 'its own overrides', '`spec.clusters[1].overrides`', '`store-berlin`'), head);
    assert.ok(rowWith(head, '`pools.worker.maxUnavailable`', '`40%`', '`100%`', 'its own overrides', '`store-berlin`'), head);
    assert.ok(rowWith(head, '`pools.worker.paused`', '`false`', '`true`', '`spec.overrides[0]`', 'region=ap', '`store-singapore`'), head);
    assert.ok(rowWith(head, '`timezone`', '`Asia/Singapore`', '`spec.overrides[0]`', '`store-singapore`'), head);
    assert.not.ok(rowWith(head, '`store-nyc`', 'overrides'), 'a cluster on the shared rollout is not listed');
    const text = renderFleetText(fp);
    assert.ok(rowWith(text, 'pools.worker.image', BAD, `shared ${NEW}`, 'its own overrides (spec.clusters[1].overrides)', 'store-berlin'), text);
    assert.ok(rowWith(text, 'pools.worker.maxUnavailable', '100%', 'shared 40%', 'store-berlin'), text);
  },
);

s("each cluster's details show the Target image per pool, as the single-cluster comment does", () => {
  const md = renderFleetMarkdown(overriddenFleet().plan());
  const berlin = md.slice(md.indexOf('<details><summary>store-berlin'));
  assert.ok(rowWith(berlin.slice(0, berlin.indexOf('</details>')), '`worker`', `\`${BAD}\``, '`100%`'), berlin);
});

s("a plan whose pools differ from the other clusters' with no override recorded (an edited fleet plan) is still named in the head", () => {
  const fp = overriddenFleet().plan();
  fp.clusters[1].overriddenBy = [];
  const head = headOf(renderFleetMarkdown(fp));
  assert.ok(rowWith(head, '`pools.worker.image`', `\`${BAD}\``, `\`${NEW}\``, 'no override in the Fleet', '`store-berlin`'), head);
});

s("500 clusters: one label override over a third of them is one row; a single cluster's own image override is in the head within 60,000 characters", () => {
  const b = bigFleet(500, 30).override({ clusterSelector: { matchLabels: { region: 'eu' } }, pools: [{ name: 'worker', maxUnavailable: 2 }] });
  b.clusters[250].overrides = { pools: [{ name: 'worker', image: BAD }] };
  const fp = b.plan();
  const md = renderFleetMarkdown(fp);
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length}`);
  const head = headOf(md);
  assert.ok(rowWith(head, '`pools.worker.image`', `\`${BAD}\``, 'its own overrides', '`site-250`'), head.slice(0, 3000));
  const eu = rowWith(head, '`pools.worker.maxUnavailable`', '`spec.overrides[0]`', 'region=eu');
  assert.ok(eu && /167 clusters/.test(eu), eu);
  assert.ok(head.length < 30_000, `${head.length}`);
});

s('many distinct overrides: the section keeps its budget and says how many rows were left out', () => {
  const b = bigFleet(500, 0);
  b.clusters.forEach((c, i) => {
    c.overrides = { pools: [{ name: 'worker', image: `${BAD.slice(0, -4)}${String(i).padStart(4, '0')}` }] };
  });
  const md = renderFleetMarkdown(b.plan());
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length}`);
  assert.match(headOf(md), /\| … \| \d+ more rows on \d+ clusters, shown by `bootcplan fleet show FLEETPLAN` \|/);
});

/** Two clusters sharing one check, one with a second pool of its own: gates and ways back to show. */
function gatedFleet() {
  return new FleetBuilder()
    .withRollout({
      pools: [{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 120 }],
      healthChecks: [{ name: 'no-critical-alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 30, successes: 2, onFailure: 'rollback' }],
    })
    .cluster('east', { cluster: workerCluster(3, 'e') })
    .cluster('west', { cluster: workerCluster(2, 'w') })
    .strategy({ canaries: ['east'] });
}

s("the text names each pool's gates and way back in the single-cluster words, identical ones once with their clusters", () => {
  const fp = gatedFleet().plan();
  const text = renderFleetText(fp);
  const section = text.slice(text.indexOf('Health gates and way back (per pool; identical ones grouped):'), text.indexOf('\nFleet: '));
  // east: 3 waves, west: 2 waves: two gate lines; one way back (both boot the same image) for both.
  const lines = section.trim().split('\n').slice(1);
  assert.is(lines.length, 3, section);
  assert.match(
    lines[0],
    /^ {2}worker gates: before the first write: no-critical-alerts; after each of 3 waves \(after the 2m soak\): no-critical-alerts; at least \S+ in all: east$/,
  );
  assert.match(lines[1], /^ {2}worker gates: .*after each of 2 waves .*: west$/);
  assert.match(lines[2], /^ {2}worker way back: back to \S+@sha256:\w{12}… via BootcNodePool\/worker spec\.image\.ref \(.*no download\): east, west$/);
  const plain = renderFleetText(new FleetBuilder().cluster('a').plan());
  assert.not.match(plain, /Health gates/);
  assert.match(plain, /\nWay back \(per pool; identical ones grouped\):\n {2}worker way back: .*: a\n/);
});

s('the comment folds the gates and ways back, grouped, before the cluster table; a fleet without checks still has its ways back', () => {
  const md = renderFleetMarkdown(gatedFleet().plan());
  const at = md.indexOf('<details><summary>Health gates and way back per pool (3 groups; identical ones grouped)</summary>');
  assert.ok(at > md.indexOf('#### Batches') && at < md.indexOf('<details><summary>Clusters (2)</summary>'), md);
  assert.match(
    md,
    /\n\| `worker` \| gates: before the first write: no-critical-alerts; after each of 3 waves \(after the 2m soak\): no-critical-alerts; at least \S+ in all \| east \|\n/,
  );
  assert.match(md, /\n\| `worker` \| way back: back to \S+ via BootcNodePool\/worker spec\.image\.ref \(.*\) \| 2: east, west \|\n/);
  const plain = renderFleetMarkdown(new FleetBuilder().cluster('a').cluster('b').plan());
  assert.match(plain, /<details><summary>Way back per pool \(1 group; identical ones grouped\)<\/summary>/);
  assert.not.match(plain, /\| gates: /);
});

s('100 clusters of 4 sizes with checks: 5 rows of gates and ways back; the comment stays within 60,000 characters with 96 clusters detailed', () => {
  const b = new FleetBuilder().withRollout({
    pools: [{ name: 'worker', image: NEW, maxUnavailable: 1 }],
    healthChecks: [{ name: 'no-critical-alerts', alerts: { matchers: ['severity="critical"'] } }],
  });
  b.name = 'edge-sites';
  for (let i = 0; i < 100; i++)
    b.cluster(`site-${String(i).padStart(3, '0')}`, { labels: { region: ['eu', 'us', 'ap'][i % 3] }, cluster: workerCluster(3 + (i % 4), `n${i}`) });
  const md = renderFleetMarkdown(b.strategy({ canaries: ['site-000', 'site-001'], maxConcurrency: '10%', batchSoakSeconds: 600 }).plan());
  assert.ok(md.length <= MARKDOWN_LIMIT, `${md.length}`);
  assert.match(md, /Health gates and way back per pool \(5 groups;/);
  assert.is((md.match(/\| `worker` \| gates: /g) ?? []).length, 4);
  assert.is((md.match(/<details><summary>site-/g) ?? []).length, 96);
});

s.run();
