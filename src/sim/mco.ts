/**
 * The MCO as the simulator plays it: a MachineConfig with `osImageURL` renders a new config in
 * every pool whose machineConfigSelector selects it, merged as the MCO merges (worker-role configs
 * first, then the others, by name; the last osImageURL wins: src/domain/mco-render.ts). While the pool is not
 * paused the node controller hands the new config to up to maxUnavailable (minus
 * unavailable) nodes, in zone order then oldest first; each MCD cordons, drains, pulls the
 * image, reboots and uncordons. The operator copies MachineConfiguration's spec to its status
 * (with status.observedGeneration).
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { hasShapeOf, type NodeObject } from '../cluster/kinds.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, MCO_REASON, ZONE_LABEL } from '../domain/labels.ts';
import type { SimWorld } from './world.ts';
import { isRenderedConfig, mergedOsImage, poolsRendering } from '../domain/mco-render.ts';

export class Mco {
  /**
   * pool -> the image its rendered config had before any MachineConfig of the pool carried an
   * osImageURL: the release's base image (the real MCO's ControllerConfig OSImageURL), which the
   * pool renders again once every such MachineConfig is deleted.
   */
  private readonly base = new Map<string, string>();

  constructor(
    private readonly world: SimWorld,
    /** How long the render takes after a MachineConfig write, seconds. */
    private readonly renderSeconds: number,
  ) {}

  /** The controllers reacting to a write. */
  onWrite(before: KObject | null, after: KObject) {
    const w = this.world;
    switch (after.kind) {
      case 'MachineConfig': {
        // Every pool whose machineConfigSelector selects the config renders it (custom pools
        // inherit worker's: src/domain/mco-render.ts), before or after a relabel.
        const image = (o: KObject | null) => (o && hasShapeOf(o, 'MachineConfig') ? o.spec?.osImageURL : undefined);
        const labelsOf = (o: KObject | null) => JSON.stringify(o?.metadata.labels ?? {});
        for (const pool of this.poolsOf(before, after)) {
          if (before === null) this.rememberBase(pool, after);
          if (image(before) !== image(after) || labelsOf(before) !== labelsOf(after)) w.after(this.renderSeconds, () => this.render(pool));
        }
        break;
      }
      case 'MachineConfigPool': {
        const paused = (o: KObject | null) => (o && hasShapeOf(o, 'MachineConfigPool') ? o.spec?.paused : undefined);
        if (before && paused(before) && !paused(after)) w.after(0, () => this.sync(after.metadata.name));
        break;
      }
      case 'MachineConfiguration': {
        // The operator copies the spec into status after a short while (pkg/operator/sync.go).
        w.after(5, () => {
          const mc = w.get('MachineConfiguration', after.metadata.name);
          if (!mc) return;
          mc.status ??= {};
          if (mc.spec?.bootImageSkewEnforcement) mc.status.bootImageSkewEnforcementStatus = structuredClone(mc.spec.bootImageSkewEnforcement);
          if (mc.spec?.managedBootImages) mc.status.managedBootImagesStatus = structuredClone(mc.spec.managedBootImages);
          // syncMachineConfiguration: status.observedGeneration = the generation it synced.
          if (typeof mc.metadata.generation === 'number') mc.status.observedGeneration = mc.metadata.generation;
          w.changed(mc);
        });
        break;
      }
    }
  }

  /**
   * The base image of each pool the simulation starts with (the release's OS image, which the
   * real MCO has in its ControllerConfig): its rendered config's image when no MachineConfig of
   * the pool carries one; else the one image its rendered configs have that none of those carry
   * (a snapshot taken after a run: the config before bootcplan's MachineConfig).
   */
  start() {
    const w = this.world;
    const pools = new Set(
      [...w.machineConfigs.values()].flatMap((m) => m.metadata.ownerReferences?.filter((r) => r.kind === 'MachineConfigPool').map((r) => r.name) ?? []),
    );
    for (const pool of pools) {
      const mcp = w.get('MachineConfigPool', pool);
      const carried = new Set(mcp ? mergedOsImage(mcp, [...w.machineConfigs.values()]).setters.map((x) => x.osImageURL) : []);
      const rendered = [...w.machineConfigs.values()]
        .filter((m) => m.metadata.ownerReferences?.some((r) => r.kind === 'MachineConfigPool' && r.name === pool))
        .map((m) => m.spec?.osImageURL)
        .filter((u): u is string => typeof u === 'string' && !carried.has(u));
      const current = w.machineConfigs.get(w.get('MachineConfigPool', pool)?.spec?.configuration?.name ?? '')?.spec?.osImageURL;
      const base = carried.size === 0 ? current : new Set(rendered).size === 1 ? rendered[0] : undefined;
      if (typeof base === 'string') this.base.set(pool, base);
    }
  }

  /** A MachineConfig was deleted: the pools that rendered it render again without it. */
  onDelete(o: KObject) {
    if (!hasShapeOf(o, 'MachineConfig') || !o.spec?.osImageURL) return;
    for (const pool of this.poolsOf(o)) this.world.after(this.renderSeconds, () => this.render(pool));
  }

  /** The pools that render a (source) MachineConfig with these objects' labels. */
  private poolsOf(...objs: (KObject | null)[]): string[] {
    const pools = [...this.world.machineConfigPools()];
    const out = new Set<string>();
    for (const o of objs) {
      if (!o || !hasShapeOf(o, 'MachineConfig') || isRenderedConfig(o)) continue;
      for (const p of poolsRendering(pools, o.metadata.labels ?? {})) out.add(p);
    }
    return [...out];
  }

  /** The pool's source MachineConfigs that set an osImageURL, but `except`. */
  private carriersOf(pool: string, except?: KObject): boolean {
    const mcp = this.world.get('MachineConfigPool', pool);
    if (!mcp) return false;
    return (
      mergedOsImage(
        mcp,
        [...this.world.machineConfigs.values()].filter((m) => m !== except),
      ).setters.length > 0
    );
  }

  /** Before the first MachineConfig with an osImageURL of a pool: the image of its rendered config is the base. */
  private rememberBase(pool: string, created: KObject) {
    if (this.base.has(pool)) return;
    const w = this.world;
    const others = this.carriersOf(pool, created);
    const rendered = w.machineConfigs.get(w.get('MachineConfigPool', pool)?.spec?.configuration?.name ?? '')?.spec?.osImageURL;
    if (!others && typeof rendered === 'string') this.base.set(pool, rendered);
  }

  /** A pool was unpaused (not by a write of the whole object): the node controller runs. */
  onUnpause(pool: string) {
    this.world.after(0, () => this.sync(pool));
  }

  private render(pool: string) {
    const w = this.world;
    const mcp = w.get('MachineConfigPool', pool);
    if (!mcp) return;
    const current = w.machineConfigs.get(mcp.spec?.configuration?.name ?? '');
    // MergeMachineConfigs: worker-role configs first, then the others, by name; the last osImageURL wins.
    const merged = mergedOsImage(mcp, [...w.machineConfigs.values()]);
    const osImageURL = merged.osImageURL ?? this.base.get(pool) ?? current?.spec?.osImageURL;
    if (!osImageURL || current?.spec?.osImageURL === osImageURL) return;
    // The same merged content renders the same name (pkg/controller/render/hash.go): here the
    // only content that varies is the image, so a config of the pool with it is reused.
    const same = [...w.machineConfigs.values()].find(
      (m) => m.metadata.ownerReferences?.some((r) => r.kind === 'MachineConfigPool' && r.name === pool) && m.spec?.osImageURL === osImageURL,
    );
    const name = same?.metadata.name ?? `rendered-${pool}-${createHash('md5').update(`${pool}/${osImageURL}`).digest('hex')}`;
    if (!w.machineConfigs.has(name)) {
      w.put({
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfig',
        metadata: {
          name,
          ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool, controller: true }],
          annotations: { 'machineconfiguration.openshift.io/os-image-url-overridden': 'true' },
        },
        spec: { ...(current?.spec ? structuredClone(current.spec) : {}), osImageURL },
      });
    }
    (mcp.spec ??= {}).configuration = { name };
    (mcp.status ??= {}).configuration = { name };
    w.changed(mcp);
    this.sync(pool);
  }

  /** The node controller: hand the target config to as many nodes as the budget allows. */
  sync(pool: string) {
    const w = this.world;
    const mcp = w.get('MachineConfigPool', pool);
    if (!mcp || mcp.spec?.paused) return;
    const target = mcp.spec?.configuration?.name;
    const key = `mco/${pool}`;
    const members = w.membersOf(key);
    if (!target) return;
    const budget = w.budgetOf(key) ?? 1;
    const free = budget - w.countUnavailable(key);
    if (free <= 0) return;
    const candidates = members
      .flatMap((name) => {
        const n = w.nodes.get(name);
        return n ? [n] : [];
      })
      .filter((n) => (n.metadata.annotations?.[MCO_DESIRED_CONFIG] ?? '') !== target && !w.isUnavailable(n.metadata.name))
      // MCO (pkg/controller/node/node_controller.go sortNodeList): alphabetically by zone,
      // oldest first inside a zone; nodes without a zone label last, oldest first.
      .sort((a, b) => {
        const za = a.metadata.labels?.[ZONE_LABEL],
          zb = b.metadata.labels?.[ZONE_LABEL];
        if ((za === undefined) !== (zb === undefined)) return za === undefined ? 1 : -1;
        if (za !== undefined && zb !== undefined && za !== zb) return za < zb ? -1 : 1;
        const ca = a.metadata.creationTimestamp ?? '',
          cb = b.metadata.creationTimestamp ?? '';
        if (ca !== cb) return ca < cb ? -1 : 1;
        return a.metadata.name < b.metadata.name ? -1 : 1;
      })
      .slice(0, free);
    for (const n of candidates) this.mcdUpdate(n, target, pool);
  }

  /** The machine-config daemon of one node: cordon, drain, pull, reboot, uncordon. */
  private mcdUpdate(n: NodeObject, target: string, pool: string) {
    const w = this.world;
    const node = n.metadata.name;
    const rt = w.runtime(node);
    if (!rt) return; // a Node the simulator has no machine for
    const token = ++rt.mcoToken;
    const ann = (n.metadata.annotations ??= {});
    ann[MCO_DESIRED_CONFIG] = target;
    ann[MCO_STATE] = 'Working';
    n.spec ??= {};
    n.spec.unschedulable = true;
    w.touch(node);
    const d = w.durationsOf(node);
    const failed = w.rebootFails();
    w.after(d.drain, () => {
      if (rt.mcoToken !== token) return;
      ann['machineconfiguration.openshift.io/lastAppliedDrain'] = `drain-${target}`;
      w.changed(n);
    });
    w.after(d.drain + d.stage, () => {
      if (rt.mcoToken !== token) return;
      ann[MCO_STATE] = 'Rebooting';
      w.recordReboot(node, 'hard', failed);
      rt.down = true;
      w.refreshReady(node);
    });
    w.after(d.drain + d.stage + d.reboot, () => {
      if (rt.mcoToken !== token) return;
      if (failed) {
        ann[MCO_STATE] = 'Degraded';
        ann[MCO_REASON] = `failed to boot into ${target}: rolled back to ${ann[MCO_CURRENT_CONFIG]}`;
      } else {
        ann[MCO_CURRENT_CONFIG] = target;
        ann[MCO_STATE] = 'Done';
      }
      w.touch(node);
    });
    w.after(d.drain + d.stage + d.reboot + d.ready, () => {
      if (rt.mcoToken !== token) return;
      rt.down = false;
      if (!failed) (n.spec ??= {}).unschedulable = false;
      w.refreshReady(node);
      this.sync(pool);
    });
  }
}
