/**
 * The rules of a rollback (docs/apply.md "Rollback"; docs/safety.md "Rollback"): which nodes go
 * back, to what, and what no rollback may ever do. Pure facts about the upstream systems:
 *
 * - bootc-operator gives every BootcNode of a pool the same desiredImage, rewritten from the
 *   pool's spec.image.ref on every reconcile, paused or not (bootc-dev/bootc-operator
 *   internal/controller/bootcnodepool_controller.go syncBootcNodeSpec): the only lever is the
 *   pool's image, one reference for all its nodes. A node that boots that image already does
 *   nothing; any other node stages it (its daemon runs `bootc switch`, which stages without
 *   `--download-only`: internal/bootc/executor.go), whether or not bootcplan reboots it.
 * - bootc keeps the previous deployment as the rollback deployment, with its image stored:
 *   `bootc switch` to that digest finds it already present and downloads nothing
 *   (bootc-dev/bootc crates/ostree-ext/src/container/store.rs prepare_internal, AlreadyPresent).
 * - The MCO names a rendered config by the hash of its merged content
 *   (openshift/machine-config-operator pkg/controller/render/hash.go), so putting the osImage
 *   MachineConfig back renders the pre-run config again, and the node controller moves only the
 *   nodes not on it (pkg/controller/node/node_controller.go getAllCandidateMachines).
 *
 * What no rollback may do: take a node this run did not update, or send a node to an image it
 * never booted. The one thing it cannot prevent is the MCO's: the pool-wide lever moves a node
 * that joined an MCO pool during the run with the others; the plan names it (joinedDuringRun).
 */
import { DIGEST_REFERENCE, isDigestReference, type NodeProgress, type NodeStep } from '../cluster/progress.ts';
import { digestOf } from './nodes.ts';

/** At most this many distinct images are recorded for a pool that started from several. */
const MAX_MIXED = 8;

/** The repository of an image reference: `quay.io/x/os:1.2` and `quay.io/x/os@sha256:…` -> `quay.io/x/os`. */
function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(0, colon) : name;
}

/**
 * The pullspec a node booted, as a digest reference: its BootcNode's status.booted.image when
 * that is one; a tag spelling becomes repository@digest (status.booted.imageDigest). Null when
 * the daemon reported no digest, or the result is not a well-formed digest reference.
 */
export function bootedPullspec(image: string | null, digest: string | null): string | null {
  if (isDigestReference(image)) return image;
  if (!image || !digest) return null;
  const ref = `${repositoryOf(image)}@${digest}`;
  return DIGEST_REFERENCE.test(ref) && ref.length <= 512 ? ref : null;
}

/**
 * The image a bootc pool's nodes booted before the run (src/cluster/progress.ts BootcOrigin),
 * from each scheduled node's booted pullspec: one digest -> that image (its most common
 * spelling: the rollback writes the spelling the nodes deployed, so `bootc switch` finds the
 * stored image without asking the registry); several -> `mixed` (no single reference can
 * return them all); none known -> all null.
 */
export function originImage(pullspecs: readonly (string | null)[]): { image: string | null; digest: string | null; mixed: string[] | null } {
  const byDigest = new Map<string, Map<string, number>>();
  for (const p of pullspecs) {
    const d = p ? digestOf(p) : null;
    if (!p || !d) continue;
    const spellings = byDigest.get(d) ?? new Map<string, number>();
    spellings.set(p, (spellings.get(p) ?? 0) + 1);
    byDigest.set(d, spellings);
  }
  if (byDigest.size === 0) return { image: null, digest: null, mixed: null };
  if (byDigest.size > 1) return { image: null, digest: null, mixed: [...byDigest.keys()].sort().slice(0, MAX_MIXED) };
  const [[digest, spellings]] = [...byDigest];
  const image = [...spellings].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
  return { image, digest, mixed: null };
}

/**
 * The steps of an entry this run wrote: every one, `cordon` included. A Node's entry is written
 * only at the cordon, at a failure and when done (src/apply/pools/bootc-node.ts): through the drain and
 * the reboot it still reads `cordon`, so the step alone never says whether the run rebooted the
 * node. What the node boots does (bootcRollbackRole): the run's image, or a reboot into it
 * requested, means the run updated it.
 */
const RUN_STEPS: ReadonlySet<NodeStep> = new Set<NodeStep>(['cordon', 'drain', 'reboot', 'booted', 'done', 'failed']);

/** What the rollback planner knows of one member of a bootc pool. */
interface BootcMemberFacts {
  /** Its progress entry (Node annotation), or null. */
  entry: NodeProgress | null;
  /** The run's plan ids (the chain), and, for scope `wave`, the one plan and wave taken back. */
  chain: ReadonlySet<string>;
  wave: { planId: string; pool: string; wave: number } | null;
  pool: string;
  bootedDigest: string | null;
  stagedDigest: string | null;
  /** BootcNode status.rollback.imageDigest: the deployment bootc keeps to go back to. */
  rollbackDigest: string | null;
  /** Its reboot into the target was requested (desiredImageState Booted, or Idle=False/Rebooting). */
  rebootRequested: boolean;
  degraded: boolean;
  /** The run's target digest and the pool's origin digest. */
  target: string;
  origin: string;
}

/**
 * What the rollback does with a member of a bootc pool:
 * - `rollback`: this run updated it (an entry of the run, within the scope, at any step: one
 *   that reads `cordon` may have been drained and rebooted) and it boots the target or was asked
 *   to: it goes back to the origin, rebooted by bootcplan;
 * - `degraded`: would be rolled back, but is Degraded: left to a human (listed);
 * - `origin-differs`: would be rolled back, but its own `from` is another image than the pool's
 *   origin, or it has none: the pool's one reference would send it to an image it never booted;
 * - `untouched`: boots the origin and has nothing of the target staged: it is not rebooted (a
 *   cordon the run left on it is undone: src/plan/rollback-bootc-pool.ts runCordon);
 * - `target-still-staged`: boots the origin, but staged the target (staging ran on every node of
 *   the pool before the first wave): bootc-operator cannot unstage it, so an unplanned reboot
 *   would boot the target (listed, with the remedy);
 * - `stages-origin`: boots another image and did boot the origin before (its entry's `from`, or
 *   bootc's rollback deployment): it will stage the origin and is not rebooted (listed);
 * - `would-stage-unbooted`: boots another image and never booted the origin: the pool's image
 *   would stage an image it never ran, so the pool cannot be rolled back (an error).
 */
export type BootcRollbackRole = 'rollback' | 'degraded' | 'origin-differs' | 'untouched' | 'target-still-staged' | 'stages-origin' | 'would-stage-unbooted';

export function bootcRollbackRole(f: BootcMemberFacts): BootcRollbackRole {
  const e = f.entry;
  const ofRun = !!e && f.chain.has(e.planId) && e.pool === f.pool && RUN_STEPS.has(e.step);
  const inScope = ofRun && (!f.wave || (e.planId === f.wave.planId && e.wave === f.wave.wave && f.pool === f.wave.pool));
  const onTarget = f.bootedDigest === f.target || f.rebootRequested;
  if (inScope && onTarget) {
    if (!e.from || digestOf(e.from) !== f.origin) return 'origin-differs';
    return f.degraded ? 'degraded' : 'rollback';
  }
  if (f.bootedDigest === f.origin) return f.stagedDigest === f.target ? 'target-still-staged' : 'untouched';
  const bootedOrigin = (!!e?.from && digestOf(e.from) === f.origin) || f.rollbackDigest === f.origin;
  return bootedOrigin ? 'stages-origin' : 'would-stage-unbooted';
}

/**
 * An MCO pool's member the rollback moves: it runs, or is moving to, the config the run rendered
 * (Node currentConfig or desiredConfig). The MCO moves every node off a config it no longer
 * targets, so an MCO pool is rolled back whole (scope `wave` acts as `run` there).
 */
export function inMcoRollback(currentConfig: string | undefined, desiredConfig: string | undefined, renderedTarget: string): boolean {
  return currentConfig === renderedTarget || desiredConfig === renderedTarget;
}

/**
 * A member of an MCO pool that joined it during the run: its Node was created after the run read
 * the pool's origin (a scale-up, a replaced machine). The MCO serves a new node the pool's
 * config, so one on the run's config may never have booted the origin image, and the pool-wide
 * lever moves it there all the same: the rollback plan names it (docs/safety.md "Rollback").
 * An unreadable creation time is not evidence of a join. A node moved into the pool from another
 * during the run (a label change) leaves no such trace and is not told apart.
 */
export function joinedDuringRun(createdAt: string | null | undefined, since: string): boolean {
  const created = Date.parse(createdAt ?? '');
  const start = Date.parse(since);
  return Number.isFinite(created) && Number.isFinite(start) && created > start;
}
