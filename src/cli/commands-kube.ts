/** `bootcplan snapshot`: writes a live cluster's snapshot file (DESIGN §2, §5). */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { writeFileAtomic } from './io.ts';
import type { CommandContext } from './deps.ts';
import { asClusterApiError } from './live.ts';

export function registerKubeCommands(program: Command, { io }: CommandContext): void {
  program
    .command('snapshot')
    .description('read the live cluster (every kind bootcplan plans from) and write a snapshot file')
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster service account)')
    .option('--context <name>', 'kubeconfig context')
    .option('-o, --output <file>', 'write to FILE (.json: JSON, otherwise YAML); default: stdout')
    .action(async (opts) => {
      const { openKubeClient, readLiveObjects } = await import('../kube/index.ts');
      const client = openKubeClient({ kubeconfig: opts.kubeconfig, context: opts.context }, io.env);
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
        metadata: { annotations: { 'bootcplan.dev/source': `live:${client.contextName}`, 'bootcplan.dev/server': client.server } },
        items: read.objects,
      };
      const json = typeof opts.output === 'string' && opts.output.endsWith('.json');
      const text = json ? JSON.stringify(list, null, 2) + '\n' : stringify(list, { lineWidth: 0 });
      if (opts.output) writeFileAtomic(opts.output, text);
      else io.stdout(text);
      const kinds = new Map<string, number>();
      for (const o of read.objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
      const summary = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
      io.stderr(`snapshot of ${client.contextName} (${client.server}): ${read.objects.length} objects${summary ? ` (${summary})` : ''}${opts.output ? ` -> ${opts.output}` : ''}\n`);
      if (read.notInstalled.length) io.stderr(`not installed: ${read.notInstalled.join(', ')}\n`);
    });
}
