/**
 * `snapshot`, `status`, `unlock` (docs/design.md §2, §5): their flags, and their actions handed to the
 * application layer (app/snapshot.ts, app/status.ts, app/unlock.ts): the commands that read the
 * cluster itself rather than a plan.
 */
import type { Command } from 'commander';
import type { KubeOptions } from '../app/ports.ts';
import { snapshotCommand } from '../app/snapshot.ts';
import { statusCommand } from '../app/status.ts';
import { watchStatus } from '../app/status-watch.ts';
import { parseDurationFlag } from '../app/flags.ts';
import { InputError } from '../base/errors.ts';
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
  watch?: boolean;
  interval?: string;
}

/** The longest --interval: a watch that reads less often than this is not following anything. */
const MAX_INTERVAL_SECONDS = 3600;

function registerStatus(program: Command, ctx: CommandContext): void {
  program
    .command('status')
    .description('show the apply lock and the progress of the last apply')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .addOption(outputFormatOption(STATUS_FORMATS, 'output format (json, yaml: {lock, progress})'))
    .option('--json', 'the same as -o json')
    .option('-w, --watch', "follow the run until it ends (kubectl's -w): exits with the run's exit code (done 0, halted 5)")
    .option('--interval <duration>', 'with --watch: how often to read the cluster, e.g. 2s, 10s, 1m (default 2s)')
    .action((opts: StatusFlags) => {
      const output = opts.json ? 'json' : opts.output;
      if (!opts.watch) {
        if (opts.interval !== undefined) throw new InputError('--interval goes with --watch', [], 'bootcplan status --watch --interval 10s');
        return exitWith(ctx, statusCommand(ctx, { kube: kubeFlags(opts), output }));
      }
      const intervalSeconds = opts.interval === undefined ? 2 : parseDurationFlag('--interval', opts.interval, MAX_INTERVAL_SECONDS);
      if (intervalSeconds <= 0) throw new InputError(`--interval ${opts.interval}: expected a duration above 0, such as 2s`);
      return exitWith(ctx, watchStatus(ctx, { kube: kubeFlags(opts), output, intervalSeconds }));
    });
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
