/**
 * `snapshot`, `status`, `unlock` (docs/design.md §2, §5): their flags, and their actions handed to the
 * application layer (app/snapshot.ts, app/status.ts, app/unlock.ts): the commands that read the
 * cluster itself rather than a plan.
 */
import type { Command } from 'commander';
import type { KubeOptions } from '../app/ports.ts';
import { snapshotCommand } from '../app/snapshot.ts';
import { statusCommand } from '../app/status.ts';
import { unlockCommand } from '../app/unlock.ts';
import { SNAPSHOT_FORMATS, STATUS_FORMATS } from '../render/formats.ts';
import { kubeconfigOption, contextOption, requestTimeoutOption, kubeFlags, outputFormatOption, exitWith, type CommandContext } from './options.ts';

// ---- snapshot ----

interface SnapshotFlags extends KubeOptions {
  /** yaml or json; unset: json for an --out file ending in .json, else yaml. */
  output?: 'yaml' | 'json';
  out?: string;
}

/** `-o FILE` was the file before `-o` named a format everywhere (docs/design.md §2). */
const snapshotMisread = (value: string) =>
  `-o names the format now; write the snapshot to a file with --out ${value}${value.endsWith('.json') ? ' (or -o json --out FILE)' : ''}`;

export function registerSnapshotCommand(program: Command, ctx: CommandContext): void {
  program
    .command('snapshot')
    .description('read the live cluster (every kind bootcplan plans from) and write a snapshot file')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .addOption(outputFormatOption(SNAPSHOT_FORMATS, 'format (default: json for an --out file ending in .json, else yaml)', null, snapshotMisread))
    .option('--out <file>', 'write the snapshot to FILE instead of stdout')
    .action((opts: SnapshotFlags) => exitWith(ctx, snapshotCommand(ctx, { output: opts.output, out: opts.out, kube: kubeFlags(opts) })));
}

// ---- status and unlock: the apply lock ----

export function registerLockCommands(program: Command, ctx: CommandContext): void {
  registerStatus(program, ctx);
  registerUnlock(program, ctx);
}

interface StatusFlags extends KubeOptions {
  output: (typeof STATUS_FORMATS)[number];
  /** The older spelling of -o json. */
  json?: boolean;
}

function registerStatus(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description('show the apply lock and the progress of the last apply')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .addOption(outputFormatOption(STATUS_FORMATS, 'output format (json, yaml: {lock, progress})'))
    .option('--json', 'the same as -o json')
    .action((opts: StatusFlags) => exitWith(ctx, statusCommand(ctx, { kube: kubeFlags(opts), output: opts.json ? 'json' : opts.output })));
}

function registerUnlock(program: Command, ctx: CommandContext): void {
  program
    .command('unlock')
    .description('release the apply lock of an apply that died (needs its lock id, see status)')
    .argument('<lockId>', 'the lock id printed by status or by the apply that holds it')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .action((lockId: string, opts: KubeOptions) => exitWith(ctx, unlockCommand(ctx, lockId, kubeFlags(opts))));
}
