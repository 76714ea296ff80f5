/**
 * `bootcplan status` (docs/design.md §5): the apply lock (who holds it, whether it expired) and the
 * progress of the last apply, read through the driver factory; nothing is written.
 */
import { EXIT } from '../base/errors.ts';
import { jsonText } from '../base/json-text.ts';
import { renderStatus, progressSummary, runningNow } from '../render/status.ts';
import { yamlOfJson } from '../render/formats.ts';
import type { CommandResult, KubeOptions, Ports } from './ports.ts';

interface StatusOptions {
  kube: KubeOptions;
  output: 'text' | 'json' | 'yaml';
}

export async function statusCommand(ports: Ports, opts: StatusOptions): Promise<CommandResult> {
  const { io } = ports;
  const { driver, close } = await ports.openDriver(opts.kube, io);
  try {
    const [lock, progress] = [await driver.readLock(), await driver.readProgress()];
    const expired = lock ? Date.parse(lock.renewedAt) / 1000 + lock.ttlSeconds < driver.clock.now() : false;
    if (opts.output !== 'text') {
      const json =
        jsonText(
          { lock: lock ? { ...lock, expired } : null, progress: progressSummary(progress, runningNow(lock, expired, progress), driver.clock.now()) },
          2,
        ) + '\n';
      io.stdout(opts.output === 'yaml' ? yamlOfJson(json) : json);
    } else {
      io.stdout(renderStatus(lock, expired, progress, driver.clock.now()));
    }
    return { exitCode: EXIT.ok };
  } finally {
    close?.();
  }
}
