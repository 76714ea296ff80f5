/** Rendering time of a big plan (text, markdown, HTML), median of `runs`. */
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import { renderText } from '../src/render/text.ts';
import { renderMarkdown } from '../src/render/markdown.ts';
import { renderHtml } from '../src/render/html/report.ts';
import { stringify } from 'yaml';

export async function benchRendering(nodes: number, runs: number) {
  const snap = snapshotFromObjects(generateCluster({ workers: nodes, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: 5 }), 'bench');
  const spec = parseRolloutSpec(
    stringify({
      apiVersion: 'bootcplan.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'bench' },
      spec: { pools: [{ name: 'worker', image: imageRef('os-43.20261115.0'), maxUnavailable: '10%', rebootPolicy: 'AllowSoftReboot' }] },
    }),
    'bench.yaml',
  );
  const plan = buildPlan({
    spec: spec.spec!,
    specMap: spec.map,
    snapshot: snap,
    specInfo: { name: 'bench', path: 'bench.yaml', ref: null, commit: null, sha256: spec.sha256, dirty: null },
  });
  const time = (fn: () => string) => {
    const xs: number[] = [];
    let out = '';
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      out = fn();
      xs.push(performance.now() - t);
    }
    return { ms: xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)], out };
  };
  const text = time(() => renderText(plan, {}));
  const md = time(() => renderMarkdown(plan, {}));
  const html = time(() => renderHtml(plan, {}));
  return { nodes, textMs: text.ms, markdownMs: md.ms, markdownChars: md.out.length, htmlMs: html.ms, htmlBytes: Buffer.byteLength(html.out) };
}
