/** Requests made by this process, by kubeconfig context, verb and resource (for benchmarks and tests). */

export interface RequestStats {
  total: number;
  byVerb: Record<string, number>;
  byResource: Record<string, number>;
  /** Requests by "VERB resource" (e.g. "PATCH nodes"). */
  byVerbResource: Record<string, number>;
  /** Bytes of request bodies sent (what bootcplan wrote). */
  bytesSent: number;
  /** The largest object a write returned (POST, PUT, PATCH: the object as stored), by resource, bytes. */
  largestWritten: Record<string, number>;
}
const emptyStats = (): RequestStats => ({ total: 0, byVerb: {}, byResource: {}, byVerbResource: {}, bytesSent: 0, largestWritten: {} });
/**
 * One store per process, not per copy of this module: a process can load two copies (the test
 * suites run the shipped bundle and import the sources beside it; docs/development.md "What the
 * tests run"), and a count kept by the copy that made no request would read zero.
 */
declare global {
  var bootcplanRequestStats: Map<string, RequestStats> | undefined;
}
const stats = (globalThis.bootcplanRequestStats ??= new Map<string, RequestStats>());

/** Requests of this process, in total or of one kubeconfig context. */
export function requestStats(context?: string): RequestStats {
  if (context !== undefined) return structuredClone(stats.get(context) ?? emptyStats());
  const all = emptyStats();
  for (const s of stats.values()) {
    all.total += s.total;
    for (const [k, v] of Object.entries(s.byVerb)) all.byVerb[k] = (all.byVerb[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.byResource)) all.byResource[k] = (all.byResource[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.byVerbResource)) all.byVerbResource[k] = (all.byVerbResource[k] ?? 0) + v;
    all.bytesSent += s.bytesSent;
    for (const [k, v] of Object.entries(s.largestWritten)) all.largestWritten[k] = Math.max(all.largestWritten[k] ?? 0, v);
  }
  return all;
}

export function resetRequestStats(): void {
  stats.clear();
}

/** Counts one request (a list page and a watch connection each count as one) and the bytes of its body. */
export function countRequest(context: string, verb: string, path: string, bodyBytes = 0): void {
  const s = statsOf(context);
  s.total++;
  s.bytesSent += bodyBytes;
  s.byVerb[verb] = (s.byVerb[verb] ?? 0) + 1;
  const key = resourceKey(path);
  s.byResource[key] = (s.byResource[key] ?? 0) + 1;
  const vk = `${verb} ${key}`;
  s.byVerbResource[vk] = (s.byVerbResource[vk] ?? 0) + 1;
}

/** Notes the size of the object a write (POST, PUT, PATCH) returned. */
export function countWritten(context: string, verb: string, path: string, bytes: number): void {
  if (verb !== 'POST' && verb !== 'PUT' && verb !== 'PATCH') return;
  const s = statsOf(context);
  const key = resourceKey(path);
  s.largestWritten[key] = Math.max(s.largestWritten[key] ?? 0, bytes);
}

function statsOf(context: string): RequestStats {
  let s = stats.get(context);
  if (!s) stats.set(context, (s = emptyStats()));
  return s;
}

function resourceKey(path: string): string {
  // /apis/g/v/namespaces/ns/plural/name/sub -> plural[/sub]
  const parts = path.split('?')[0].split('/').filter(Boolean);
  let i = parts[0] === 'api' ? 2 : 3;
  if (parts[i] === 'namespaces' && parts.length > i + 2) i += 2;
  const res = parts[i] ?? parts.join('/');
  const sub = parts[i + 2];
  return sub ? `${res}/${sub}` : res;
}
