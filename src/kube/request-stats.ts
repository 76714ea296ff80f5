/** Requests made by this process, by kubeconfig context, verb and resource (for benchmarks and tests). */

export interface RequestStats {
  total: number;
  byVerb: Record<string, number>;
  byResource: Record<string, number>;
}
const emptyStats = (): RequestStats => ({ total: 0, byVerb: {}, byResource: {} });
const stats = new Map<string, RequestStats>();

/** Requests of this process, in total or of one kubeconfig context. */
export function requestStats(context?: string): RequestStats {
  if (context !== undefined) return structuredClone(stats.get(context) ?? emptyStats());
  const all = emptyStats();
  for (const s of stats.values()) {
    all.total += s.total;
    for (const [k, v] of Object.entries(s.byVerb)) all.byVerb[k] = (all.byVerb[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.byResource)) all.byResource[k] = (all.byResource[k] ?? 0) + v;
  }
  return all;
}

export function resetRequestStats(): void {
  stats.clear();
}

/** Counts one request (a list page and a watch connection each count as one). */
export function countRequest(context: string, verb: string, path: string): void {
  let s = stats.get(context);
  if (!s) stats.set(context, (s = emptyStats()));
  s.total++;
  s.byVerb[verb] = (s.byVerb[verb] ?? 0) + 1;
  // /apis/g/v/namespaces/ns/plural/name/sub -> plural[/sub]
  const parts = path.split('?')[0].split('/').filter(Boolean);
  let i = parts[0] === 'api' ? 2 : 3;
  if (parts[i] === 'namespaces' && parts.length > i + 2) i += 2;
  const res = parts[i] ?? parts.join('/');
  const sub = parts[i + 2];
  const key = sub ? `${res}/${sub}` : res;
  s.byResource[key] = (s.byResource[key] ?? 0) + 1;
}
