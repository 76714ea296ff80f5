import { readFileSync } from 'node:fs';
import { clientFor, parseEnvFile } from './env.ts';
const env = parseEnvFile(readFileSync(process.argv[2] + '/env', 'utf8'));
const c = clientFor(env.KUBECONFIG);
const nodes = (await c.list('/api/v1/nodes', 'Node')).items;
const steps: Record<string, number> = {};
for (const n of nodes) { const a = n.metadata.annotations?.['bootcplan.dev/progress']; const k = a ? JSON.parse(a).step : 'none'; steps[k] = (steps[k] ?? 0) + 1; }
const bns = (await c.list('/apis/node.bootc.dev/v1alpha1/bootcnodes', 'BootcNode')).items;
const idle: Record<string, number> = {};
for (const b of bns) { const r = (b.status?.conditions ?? []).find((x: any) => x.type === 'Idle')?.reason ?? 'none'; idle[r] = (idle[r] ?? 0) + 1; }
console.log(JSON.stringify({ steps, idle, unsched: nodes.filter((n: any) => n.spec?.unschedulable).length }));
process.exit(0);
