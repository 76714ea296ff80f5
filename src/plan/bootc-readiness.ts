/**
 * Planning a bootc pool's nodes that the bootc-operator's daemon cannot act on
 * (src/domain/bootc-daemon.ts; docs/design.md §7 "Pools and waves"): a node without the
 * `bootc.dev/managed` label the daemon's DaemonSet selects on (`not-managed`), and a node whose
 * BootcNode has no status yet (`no-bootcnode-status`), and a node whose booted entry bootc cannot
 * manage (`incompatible`: local rpm-ostree layering). None would ever stage the target, so
 * scheduling them would only make apply wait out the staging limit and halt the pool. They are
 * held back with a warning at the spec's pool entry that names the remedy. Pure.
 */
import type { PoolSpec } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { NodeIndex, NodeView } from '../domain/nodes.ts';
import { daemonGap, type DaemonGap } from '../domain/bootc-daemon.ts';
import { BOOTC_MANAGED_LABEL } from '../domain/labels.ts';
import type { BlockedBy } from './types.ts';

const SHOWN = 20;
const names = (ns: string[]) => (ns.length > SHOWN ? `${ns.slice(0, SHOWN).join(', ')} and ${ns.length - SHOWN} more` : ns.join(', '));

/** The pending nodes of a bootc pool the daemon cannot reach (node -> why); reports one warning per kind. */
export function daemonGapBlocks(
  pool: { spec: PoolSpec; path: string; pending: NodeView[]; blocked: ReadonlyMap<string, BlockedBy> },
  idx: NodeIndex,
  report: (d: DiagnosticInput) => void,
): Map<string, BlockedBy> {
  const held = new Map<string, BlockedBy>();
  const by: Record<DaemonGap, string[]> = { 'not-managed': [], 'no-bootcnode-status': [], incompatible: [] };
  for (const n of pool.pending) {
    if (pool.blocked.has(n.name)) continue;
    const node = idx.nodes.get(n.name);
    const gap = node ? daemonGap(node, idx.bootcNodes.get(n.name)) : null;
    if (!gap) continue;
    held.set(n.name, gap);
    by[gap].push(n.name);
  }
  const name = pool.spec.name;
  const at = joinPath(pool.path, 'name');
  if (by['not-managed'].length) {
    const ns = by['not-managed'];
    report({
      severity: 'warning',
      code: 'node-not-managed',
      path: at,
      message: `${ns.length} node(s) of BootcNodePool ${name} lack the ${BOOTC_MANAGED_LABEL} label, the bootc-operator daemon's node selector: no daemon runs there to stage the target, so they are not scheduled: ${names(ns)}`,
      hint: `the bootc-operator's controller labels each node it takes into a pool; check that it runs (its logs name the node), or label the node yourself (\`oc label node ${ns[0]} ${BOOTC_MANAGED_LABEL}=\`), wait for the daemon pod on it, then plan again`,
    });
  }
  if (by['no-bootcnode-status'].length) {
    const ns = by['no-bootcnode-status'];
    report({
      severity: 'warning',
      code: 'bootcnode-without-status',
      path: at,
      message: `${ns.length} node(s) of BootcNodePool ${name} have a BootcNode without a status: their bootc-operator daemon has not reported yet (it writes the status), so they would never stage the target and are not scheduled: ${names(ns)}`,
      hint: `check the daemon pod on each node (\`oc get pods -A -o wide --field-selector spec.nodeName=${ns[0]}\`: the bootc-operator DaemonSet); once \`oc get bootcnode ${ns[0]} -o yaml\` shows a status, plan again`,
    });
  }
  if (by.incompatible.length) {
    const ns = by.incompatible;
    report({
      severity: 'warning',
      code: 'bootcnode-incompatible',
      path: at,
      message: `${ns.length} node(s) of BootcNodePool ${name} boot a deployment bootc cannot manage (BootcNode status.booted.incompatible: local changes such as rpm-ostree package layering): bootc would refuse to stage the target there, so they are not scheduled: ${names(ns)}`,
      hint: `remove the local layering on the node (\`rpm-ostree status\` lists it; \`rpm-ostree reset\` drops layered packages and overrides, then reboot) and plan again once \`oc get bootcnode ${ns[0]} -o jsonpath='{.status.booted.incompatible}'\` is no longer true, or take the node out of the pool (change its labels so the BootcNodePool's nodeSelector no longer matches it)`,
    });
  }
  return held;
}
