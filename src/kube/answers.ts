/**
 * What came back from the API server, checked before anyone reads it. A kube-apiserver
 * answers every request with JSON (Accept: application/json): an object of the kind asked
 * for, a `<Kind>List` with an `items` array, or a `Status` for errors (apimachinery
 * pkg/apis/meta/v1 types.go). Anything else (a login proxy's HTML page with status 200,
 * garbage bytes, `{}` where a list was expected, another kind) did not come from the API
 * server, and is refused here with a message that names the endpoint and shows, made
 * printable, what came back.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { MAX_NESTING } from '../base/limits.ts';

/** What a 2xx answer must be: an object of `kind`, a list of `kind` objects, or any JSON object. */
export type Expected = { kind: string; list: boolean } | null;

/** A refused answer: why, in words, for KubeRequestError. */
export class AnswerRefused extends Error {
  constructor(message: string, readonly problem: 'not-json' | 'unexpected-answer') {
    super(message);
  }
}

/**
 * JSON deeper than this is refused: V8's JSON.parse copes, recursive readers after it
 * overflow the stack. The snapshot file reader's limit (src/base/limits.ts), so what
 * `bootcplan snapshot` writes is always a file it reads back.
 */
export const MAX_JSON_DEPTH = MAX_NESTING;

// C0 and C1 controls, DEL, and the bidi overrides and isolates (Trojan Source, CVE-2021-42574).
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text made one printable line: control and bidi characters escaped (\n, \x1b, \u202e). */
export function printable(text: string, max = 1000): string {
  const cut = text.length > max ? text.slice(0, max) + '...' : text;
  return cut.replace(UNPRINTABLE, (ch) => ESCAPES[ch] ?? (ch.charCodeAt(0) <= 0xff ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** `text/html; charset=utf-8, 1234 bytes`: what kind of answer, and how big. */
export function describeAnswer(headers: IncomingHttpHeaders, body: Buffer): string {
  return `${printable(String(headers['content-type'] ?? 'no content-type'), 100)}, ${body.length} bytes`;
}

/** The first bytes of a body, made printable and quoted: `"<!DOCTYPE html>\n<html>..."`. */
export function preview(body: Buffer, shown = 80): string {
  return `"${printable(body.subarray(0, shown).toString('utf8'), shown)}${body.length > shown ? '...' : ''}"`;
}

/** True when the JSON text nests arrays/objects deeper than `max` (a linear scan, strings skipped). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Parses a JSON body; AnswerRefused when it is not JSON or nests too deep. */
export function parseJsonBody(body: Buffer, status: number, headers: IncomingHttpHeaders): unknown {
  if (!body.length) throw new AnswerRefused(`the answer (${status}, ${describeAnswer(headers, body)}) is empty`, 'not-json');
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AnswerRefused(`the answer (${status}, ${describeAnswer(headers, body)}) is not JSON: ${preview(body)}`, 'not-json');
  }
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw new AnswerRefused(`the answer (${status}, ${describeAnswer(headers, body)}) is JSON nested deeper than ${MAX_JSON_DEPTH} levels: ${preview(body, 40)}`, 'unexpected-answer');
  return value;
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function refuse(message: string): never {
  throw new AnswerRefused(message, 'unexpected-answer');
}

/** An object of the API: a JSON object with metadata.name (list items may leave out kind). */
function checkObject(o: unknown, kind: string, where: string): void {
  if (!isObject(o)) refuse(`${where} is ${typeName(o)}, not an object with metadata.name`);
  if (o.kind !== undefined && o.kind !== kind) refuse(`${where} is kind ${printable(String(o.kind), 100)}, not ${kind}`);
  if (!isObject(o.metadata) || typeof o.metadata.name !== 'string' || o.metadata.name === '') refuse(`${where} has no metadata.name (metadata is ${typeName(o.metadata)})`);
}

/**
 * Checks a parsed 2xx answer against what the request expects; returns it. A list must be
 * `<Kind>List` with an array of objects (a null `items` is an empty list, as Go encodes a nil
 * slice); an object must carry exactly the expected kind and a metadata.name.
 */
export function checkAnswer(value: unknown, expected: Expected): any {
  if (!isObject(value)) refuse(`expected ${expected ? `a ${expected.kind}${expected.list ? 'List' : ''}` : 'a JSON object'}, got ${typeName(value)}`);
  if (!expected) return value;
  const want = expected.list ? `${expected.kind}List` : expected.kind;
  if (value.kind === undefined) refuse(`expected a ${want}, got an object without kind`);
  if (value.kind !== want) refuse(`expected a ${want}, got kind ${printable(String(value.kind), 100)}`);
  if (!expected.list) {
    checkObject(value, want, `the ${want}`);
    return value;
  }
  if (value.items === null) value.items = [];
  if (!Array.isArray(value.items)) refuse(`got a ${want} whose items is ${typeName(value.items)}, not an array`);
  if (value.metadata !== undefined && !isObject(value.metadata)) refuse(`got a ${want} whose metadata is ${typeName(value.metadata)}`);
  value.items.forEach((o: unknown, i: number) => checkObject(o, expected.kind, `item ${i + 1} of the ${want}`));
  return value;
}

/** A Kubernetes Status (the body of every error the API server itself returns), or null. */
export function statusOf(body: Buffer): Record<string, any> | null {
  if (!body.length || nestedDeeperThan(body.toString('utf8'), MAX_JSON_DEPTH)) return null;
  try {
    const v = JSON.parse(body.toString('utf8'));
    return isObject(v) && v.kind === 'Status' ? v : null;
  } catch {
    return null;
  }
}

/**
 * The API server's answer for a path it does not serve at all (an API group that is not
 * installed) is Go's http.NotFound: text/plain "404 page not found" (apiserver
 * pkg/server/mux). That one is a real "not installed"; an HTML 404 is not.
 */
export function isApiServerNotFoundPage(status: number, body: Buffer): boolean {
  return status === 404 && body.length < 100 && body.toString('utf8').trim() === '404 page not found';
}

const WATCH_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/**
 * One line of a watch stream: a JSON object `{type, object}` (apimachinery
 * pkg/apis/meta/v1 WatchEvent); objects of ADDED, MODIFIED and DELETED carry metadata.name,
 * a BOOKMARK carries metadata (its resourceVersion), an ERROR carries a Status.
 */
export function parseWatchEvent(line: string): { type: string; object: any } {
  const shown = () => preview(Buffer.from(line));
  if (nestedDeeperThan(line, MAX_JSON_DEPTH)) throw new AnswerRefused(`a watch event is JSON nested deeper than ${MAX_JSON_DEPTH} levels: ${shown()}`, 'unexpected-answer');
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    throw new AnswerRefused(`a line of the watch stream is not JSON: ${shown()}`, 'not-json');
  }
  if (!isObject(ev) || typeof ev.type !== 'string' || !WATCH_TYPES.has(ev.type) || !isObject(ev.object)) {
    throw new AnswerRefused(`a line of the watch stream is not a watch event ({type, object}): ${shown()}`, 'unexpected-answer');
  }
  if (ev.type !== 'ERROR' && !isObject(ev.object.metadata)) refuse(`a ${ev.type} watch event has no metadata: ${shown()}`);
  if (ev.type !== 'ERROR' && ev.type !== 'BOOKMARK' && (typeof ev.object.metadata.name !== 'string' || ev.object.metadata.name === '')) refuse(`a ${ev.type} watch event has no metadata.name: ${shown()}`);
  return ev as { type: string; object: any };
}
