/**
 * A generator of whole clusters, for the bundled example, the 1k/10k/50k benchmark snapshots,
 * property tests and rehearsals; its objects come from the builders of node-objects.ts and
 * cluster-objects.ts. Deterministic: the same options give the same objects.
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { ROLE_LABEL_PREFIX } from '../domain/labels.ts';
import { fakeDigest, imageRef } from './fake-ids.ts';
import { bootcNodeObject, bootcNodePoolObject, machineConfigPoolObject, mcoAnnotations, nodeObject, renderedMachineConfig } from './node-objects.ts';
import { clusterSingletons } from './cluster-objects.ts';

interface GenerateOptions {
  workers: number;
  zones?: string[];
  region?: string;
  /** Fraction of workers already staged with the target (0..1). */
  stagedFraction?: number;
  softRebootCapableFraction?: number;
  cordoned?: number;
  notReady?: number;
  degraded?: number;
  /** Workers driven by bootc-operator (true) or MCO only (false). */
  bootc?: boolean;
  targetLabel?: string;
  currentLabel?: string;
}

/** A whole cluster: 3 MCO masters and N workers across zones, with the cluster singletons. */
export function generateCluster(o: GenerateOptions): KObject[] {
  const zones = o.zones ?? ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const region = o.region ?? 'us-east-1';
  const bootc = o.bootc ?? true;
  const current = imageRef(o.currentLabel ?? 'os-43.20260901.0');
  const target = imageRef(o.targetLabel ?? 'os-43.20261115.0');
  const rhcos = 'quay.io/openshift-release-dev/ocp-v4.0-art-dev@' + fakeDigest('rhcos-4.22.3');
  const renderedMaster = 'rendered-master-' + createHash('md5').update('m').digest('hex');
  const renderedWorker = 'rendered-worker-' + createHash('md5').update('w').digest('hex');
  const objs: KObject[] = [];
  for (let i = 0; i < 3; i++) {
    objs.push(
      nodeObject({
        name: `master-${i}`,
        role: 'master',
        zone: zones[i % zones.length],
        region,
        instanceType: 'm6i.2xlarge',
        annotations: mcoAnnotations(renderedMaster),
      }),
    );
  }
  const staged = Math.round((o.stagedFraction ?? 0) * o.workers);
  const soft = o.softRebootCapableFraction ?? 0;
  const width = String(o.workers).length;
  for (let i = 0; i < o.workers; i++) {
    const zone = zones[i % zones.length];
    const name = `worker-${zone.slice(-1)}-${String(Math.floor(i / zones.length)).padStart(width, '0')}`;
    const cordoned = i < (o.cordoned ?? 0);
    const notReady = i >= (o.cordoned ?? 0) && i < (o.cordoned ?? 0) + (o.notReady ?? 0);
    const degradedStart = (o.cordoned ?? 0) + (o.notReady ?? 0);
    const degraded = i >= degradedStart && i < degradedStart + (o.degraded ?? 0);
    const createdAt = new Date(Date.parse('2026-01-01T00:00:00Z') + ((i * 7919) % o.workers) * 60000).toISOString().replace('.000', '');
    objs.push(
      nodeObject({
        name,
        role: 'worker',
        zone,
        region,
        cordoned,
        ready: !notReady,
        createdAt,
        bootc,
        annotations: bootc ? {} : mcoAnnotations(renderedWorker, degraded ? 'Degraded' : 'Done'),
      }),
    );
    if (bootc) {
      const isStaged = i >= o.workers - staged;
      objs.push(
        bootcNodeObject({
          name,
          pool: 'worker',
          desiredImage: current,
          booted: { image: current },
          staged: isStaged ? { image: target, softRebootCapable: (i * 37) % 100 < soft * 100 } : null,
          idle: isStaged ? 'Staged' : 'Idle',
          degraded: degraded ? 'bootc stage failed: writing layer: no space left on device' : null,
        }),
      );
    }
  }
  objs.push(machineConfigPoolObject('master', 1, renderedMaster, { [`${ROLE_LABEL_PREFIX}master`]: '' }));
  objs.push(machineConfigPoolObject('worker', 1, renderedWorker, { [`${ROLE_LABEL_PREFIX}worker`]: '' }));
  objs.push(renderedMachineConfig(renderedMaster, 'master', rhcos));
  objs.push(renderedMachineConfig(renderedWorker, 'worker', bootc ? rhcos : current));
  if (bootc) objs.push(bootcNodePoolObject('worker', current, { maxUnavailable: 1, paused: true }, { [`${ROLE_LABEL_PREFIX}worker`]: '' }));
  objs.push(...clusterSingletons({ region, zones, platform: 'AWS', version: '4.22.3' }));
  return objs;
}
