/**
 * The progress of applies in the simulated cluster, as a real cluster keeps it: the run
 * record in ConfigMap `bootcplan-progress` (key `run.json`, versioned like a resourceVersion:
 * a write against another version is refused) and each node's entry in its Node annotation
 * `bootcplan.dev/progress`; and bootcplan's record documents (the fleet record) as
 * src/kube/record-documents.ts keeps them. Counts what is written, for the scale figures (BENCHMARKS.md).
 */
import type { KObject, RecordDocument } from '../cluster/types.ts';
import { BOOTCPLAN_NAMESPACE, PROGRESS_NAME } from '../cluster/types.ts';
import { type NodeProgress, type ProgressRecord, type ProgressState, ProgressMovedError, DriverError } from '../apply/ports/driver.ts';
import { BOOTCPLAN_PROGRESS, encodeNodeProgress, nodeProgressOfAll } from '../cluster/progress.ts';
import { decodeRunRecord } from '../cluster/run-record.ts';

/** What bootcplan wrote to progress objects: count, bytes, and the largest value. */
interface ProgressWrites {
  runWrites: number;
  runBytes: number;
  /** The largest run record written, bytes of its JSON. */
  largestRun: number;
  nodeWrites: number;
  nodeBytes: number;
  /** The largest node entry written, bytes of the annotation (key and value). */
  largestNodeEntry: number;
}

interface Objects {
  get(kind: string, name: string, namespace?: string | null): KObject | undefined;
  put(o: KObject): void;
  changed(o: KObject | undefined): void;
}

export class SimProgress {
  readonly writes: ProgressWrites = { runWrites: 0, runBytes: 0, largestRun: 0, nodeWrites: 0, nodeBytes: 0, largestNodeEntry: 0 };
  private versions = 0;

  constructor(private readonly objects: Objects) {}

  read(nodes: Iterable<KObject>): ProgressState {
    const cm = this.objects.get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
    const text = cm?.data?.['run.json'];
    // Checked as the Kubernetes driver checks it (src/cluster/run-record.ts): a test or a
    // rehearsal that edits the record sees the same refusal as a real cluster gives.
    const run = text ? decodeRunRecord(text) : null;
    if (typeof run === 'string') throw new DriverError(`ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}: run.json ${run}`);
    return { run, version: cm?.metadata.resourceVersion ?? null, nodes: nodeProgressOfAll(nodes) };
  }

  write(p: ProgressRecord, version: string | null): string {
    const cm = this.objects.get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
    const current = cm?.metadata.resourceVersion ?? null;
    if (current !== version)
      throw new ProgressMovedError(
        `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME} was written by someone else (version ${current ?? 'none'}, this apply expected ${version ?? 'none'})`,
      );
    const text = JSON.stringify(p);
    const next = `run-${++this.versions}`;
    this.writes.runWrites++;
    this.writes.runBytes += text.length;
    this.writes.largestRun = Math.max(this.writes.largestRun, text.length);
    const data = { 'plan-id': p.planId, 'run.json': text };
    if (cm) {
      cm.data = data;
      cm.metadata.resourceVersion = next;
      this.objects.changed(cm);
    } else {
      this.objects.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, resourceVersion: next }, data });
    }
    return next;
  }

  /** A record document (src/cluster/types.ts RecordDocument; the fleet record), as the Kubernetes driver reads it. */
  readDocument<T>(doc: RecordDocument<T>): T | null {
    const text = this.objects.get('ConfigMap', doc.name, BOOTCPLAN_NAMESPACE)?.data?.[doc.key];
    if (!text) return null;
    const r = doc.decode(text);
    if (typeof r === 'string') throw new Error(`ConfigMap ${BOOTCPLAN_NAMESPACE}/${doc.name}: ${r}`);
    return r;
  }

  writeDocument<T>(doc: RecordDocument<T>, value: T): void {
    const cm = this.objects.get('ConfigMap', doc.name, BOOTCPLAN_NAMESPACE);
    const data = { ...doc.summary(value), [doc.key]: JSON.stringify(value) };
    const resourceVersion = `record-${++this.versions}`;
    if (cm) {
      cm.data = data;
      cm.metadata.resourceVersion = resourceVersion;
      this.objects.changed(cm);
    } else {
      this.objects.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: doc.name, namespace: BOOTCPLAN_NAMESPACE, resourceVersion }, data });
    }
  }

  /** Sets the node's entry (the caller reports the change, with the write it is part of). */
  annotate(n: KObject, p: NodeProgress): void {
    const text = encodeNodeProgress(p);
    const bytes = BOOTCPLAN_PROGRESS.length + text.length;
    this.writes.nodeWrites++;
    this.writes.nodeBytes += bytes;
    this.writes.largestNodeEntry = Math.max(this.writes.largestNodeEntry, bytes);
    (n.metadata.annotations ??= {})[BOOTCPLAN_PROGRESS] = text;
  }
}
