/** Small formatting helpers shared by the renderers (pure). */
import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/** 5400 -> "1h30m"; 90 -> "1m30s"; 45 -> "45s"; 0 -> "0s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return m ? `${h}h${m}m` : `${h}h`;
  if (m) return r ? `${m}m${r}s` : `${m}m`;
  return `${r}s`;
}

/** sha256:e26b09deae87… -> "sha256:e26b09de…" */
export function shortDigest(d: string | null | undefined, n = 8): string {
  if (!d) return '(unknown)';
  const m = /^(.*?)(sha256:)([0-9a-f]{64})$/.exec(d);
  if (!m) return d;
  return `${m[1]}${m[2]}${m[3].slice(0, n)}…`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function padTable(rows: string[][], gap = 2): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(c))));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - visibleLength(c) + gap))).join('').trimEnd());
}

export function visibleLength(s: string): number {
  return s.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/** Folds a sorted list of names: ["w-1","w-2","w-3","w-7"] -> "w-1..w-3, w-7" when names share a numeric suffix pattern. */
export function foldNames(names: readonly string[], max = 12): string {
  const groups: string[] = [];
  let i = 0;
  while (i < names.length) {
    const m = /^(.*?)(\d+)$/.exec(names[i]);
    let j = i;
    if (m) {
      while (j + 1 < names.length) {
        const n = /^(.*?)(\d+)$/.exec(names[j + 1]);
        if (!n || n[1] !== m[1] || Number(n[2]) !== Number(m[2]) + (j + 1 - i) || n[2].length !== m[2].length) break;
        j++;
      }
    }
    groups.push(j - i >= 2 ? `${names[i]}..${names[j]}` : j > i ? `${names[i]}, ${names[j]}` : names[i]);
    i = j + 1;
  }
  if (groups.length > max) return `${groups.slice(0, max).join(', ')} and ${groups.length - max} more`;
  return groups.join(', ');
}
