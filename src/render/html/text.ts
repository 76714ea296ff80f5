/**
 * Numbers and words of the HTML report as escaped text. A crafted plan file may hold a string
 * (markup, even) where a number belongs, and the formatting helpers pass such a string
 * through: every figure the report writes goes through one of these (docs/safety.md "What is masked in outputs"). Pure.
 */
import { formatDuration, formatCount, plural } from '../format.ts';
import { escapeHtml } from '../vocabulary.ts';

/** "1h30m", escaped. */
export function durationHtml(seconds: unknown): string {
  return escapeHtml(formatDuration(seconds as number));
}

/** "12,345", escaped. */
export function countHtml(n: unknown): string {
  return escapeHtml(formatCount(n as number));
}

/** "3 nodes", escaped. */
export function pluralHtml(n: unknown, one: string, many?: string): string {
  return escapeHtml(plural(n as number, one, many));
}

/** A value from a closed set (an action, a risk, a severity) as a class name: anything else is `other`. */
export function classHtml<T extends string>(value: unknown, allowed: readonly T[]): T | 'other' {
  return allowed.find((a) => a === value) ?? 'other';
}
