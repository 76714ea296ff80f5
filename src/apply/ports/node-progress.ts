/**
 * A node's progress entry as it lives on the Node (docs/design.md §7 "Apply is resumable"): the
 * annotation `bootcplan.dev/progress`. The codec is pure and lives with the run record's types
 * (src/cluster/progress.ts), where the rollback planner reads it too; re-exported here for the
 * applier and the drivers.
 */
export { BOOTCPLAN_PROGRESS, encodeNodeProgress, decodeNodeProgress, nodeProgressOf, nodeProgressOfAll } from '../../cluster/progress.ts';
