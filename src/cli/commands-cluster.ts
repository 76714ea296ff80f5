/**
 * `snapshot`, `status`, `unlock` (DESIGN §2, §5): read the cluster itself rather than a
 * plan: write its snapshot file, show the apply lock and progress, release a dead apply's
 * lock.
 */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { InputError } from '../base/errors.ts';
import { renderStatus, progressSummary } from '../render/status.ts';
import { kubeconfigOption, contextOption, requestTimeoutOption, kubeFlags, outputFormatOption, type CommandContext } from './options.ts';
import { jsonText } from '../base/json-text.ts';
import { forDisplay } from '../render/secrets.ts';
import { clusterIdentityOf, KUBE_SYSTEM_NAMESPACE, SNAPSHOT_SERVER_ANNOTATION } from '../cluster/identity.ts';
import type { KubeOptions } from '../app/ports.ts';
import { writeFileAtomic } from '../app/files.ts';
import { asClusterApiError } from '../app/live.ts';
import { SNAPSHOT_FORMATS, STATUS_FORMATS, yamlOfJson } from '../render/formats.ts';

// ---- snapshot ----

interface SnapshotOptions extends KubeOptions {
  /** yaml or json; unset: json for an --out file ending in .json, else yaml. */
  output?: 'yaml' | 'json';
  out?: string;
}

/** `-o FILE` was the file before `-o` named a format everywhere (DESIGN §2). */
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
    .action((opts: SnapshotOptions) => snapshotAction(ctx, opts));
}

async function snapshotAction({ io }: CommandContext, opts: SnapshotOptions): Promise<void> {
  const { openKubeClient, readLiveObjects } = await import('../kube/index.ts');
  const client = openKubeClient(kubeFlags(opts), io.env);
  let read;
  try {
    read = await readLiveObjects(client);
  } catch (err) {
    throw asClusterApiError(err);
  } finally {
    client.close();
  }
  const list = {
    apiVersion: 'v1', kind: 'List',
    metadata: { annotations: { 'bootcplan.dev/source': `live:${client.contextName}`, [SNAPSHOT_SERVER_ANNOTATION]: client.server } },
    items: read.objects,
  };
  const json = opts.output ? opts.output === 'json' : !!opts.out?.endsWith('.json');
  const text = json ? JSON.stringify(list, null, 2) + '\n' : stringify(list, { lineWidth: 0 });
  if (opts.out) writeFileAtomic(opts.out, text, 'private');
  else io.stdout(text);
  const kinds = new Map<string, number>();
  for (const o of read.objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
  const summary = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
  io.stderr(`snapshot of ${client.contextName} (${client.server}): ${read.objects.length} objects${summary ? ` (${summary})` : ''}${opts.out ? ` -> ${opts.out}` : ''}\n`);
  // The identity plans made from this file record (src/cluster/identity.ts).
  const find = (kind: string, name: string) => read.objects.find((o) => o.kind === kind && o.metadata.name === name) ?? null;
  const identity = clusterIdentityOf({ clusterVersion: find('ClusterVersion', 'version'), kubeSystemNamespace: find('Namespace', KUBE_SYSTEM_NAMESPACE) });
  io.stderr(forDisplay(identity ? `cluster identity: ${identity.kind} ${identity.id}` : 'cluster identity: none found (no ClusterVersion clusterID, no kube-system Namespace): plans made from this file run on no live cluster') + '\n');
  if (read.notInstalled.length) io.stderr(`not installed: ${read.notInstalled.join(', ')}\n`);
}

// ---- status and unlock: the apply lock ----

export function registerLockCommands(program: Command, ctx: CommandContext): void {
  registerStatus(program, ctx);
  registerUnlock(program, ctx);
}

interface StatusOptions extends KubeOptions {
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
    .action((opts: StatusOptions) => statusAction(ctx, opts));
}

async function statusAction({ io, openDriver }: CommandContext, opts: StatusOptions): Promise<void> {
  const { driver, close } = await openDriver(kubeFlags(opts), io);
  try {
    const [lock, progress] = [await driver.readLock(), await driver.readProgress()];
    const expired = lock ? Date.parse(lock.renewedAt) / 1000 + lock.ttlSeconds < driver.clock.now() : false;
    const format = opts.json ? 'json' : opts.output;
    if (format !== 'text') {
      const json = jsonText({ lock: lock ? { ...lock, expired } : null, progress: progressSummary(progress) }, 2) + '\n';
      io.stdout(format === 'yaml' ? yamlOfJson(json) : json);
      return;
    }
    io.stdout(renderStatus(lock, expired, progress));
  } finally {
    close?.();
  }
}

function registerUnlock(program: Command, ctx: CommandContext): void {
  program
    .command('unlock')
    .description('release the apply lock of an apply that died (needs its lock id, see status)')
    .argument('<lockId>', 'the lock id printed by status or by the apply that holds it')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .action((lockId: string, opts: KubeOptions) => unlockAction(ctx, lockId, opts));
}

async function unlockAction({ io, openDriver }: CommandContext, lockId: string, opts: KubeOptions): Promise<void> {
  const { driver, close } = await openDriver(kubeFlags(opts), io);
  try {
    const lock = await driver.readLock();
    if (!lock) {
      io.stdout('no apply lock is held\n');
      return;
    }
    if (lock.lockId !== lockId) {
      throw new InputError(`lock id ${lockId} does not match the lock held by ${lock.holder} since ${lock.since}`, [], `the current lock id is ${lock.lockId}; check that this apply is really dead before releasing it`);
    }
    await driver.releaseLock(lockId);
    io.stdout(`released lock ${lockId} (held by ${lock.holder} since ${lock.since}, plan ${lock.planId}); apply again to resume\n`);
  } finally {
    close?.();
  }
}
