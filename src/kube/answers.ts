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
import type { KObject } from '../cluster/types.ts';
import { objectShapeProblem, type ViewOf } from '../cluster/kinds.ts';
import { NamedError } from '../base/errors.ts';
import { valueText } from '../base/json-text.ts';

/** A refused answer: why, in words, for KubeRequestError. */
export class AnswerRefused extends NamedError {
  constructor(
    message: string,
    readonly problem: 'not-json' | 'unexpected-answer',
  ) {
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
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text made one printable line: control and bidi characters escaped (\n, \x1b, \u202e). */
export function printable(text: string, max = 1000): string {
  const cut = text.length > max ? text.slice(0, max) + '...' : text;
  return cut.replace(
    UNPRINTABLE,
    (ch) =>
      ESCAPES[ch] ??
      (ch.charCodeAt(0) <= 0xff ? `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
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
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
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
  if (nestedDeeperThan(text, MAX_JSON_DEPTH))
    throw new AnswerRefused(
      `the answer (${status}, ${describeAnswer(headers, body)}) is JSON nested deeper than ${MAX_JSON_DEPTH} levels: ${preview(body, 40)}`,
      'unexpected-answer',
    );
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function refuse(message: string): never {
  throw new AnswerRefused(message, 'unexpected-answer');
}

/** The resource a request reads: its kind, and its apiVersion where list items and watch events leave both out. */
export interface Expected<K extends string> {
  apiVersion?: string;
  kind: K;
}

/**
 * An object of the API: a JSON object with metadata.name (list items and watch events may leave
 * out apiVersion and kind: filled in from `expected`), and for a kind bootcplan reads, every
 * field its view names of the right type (src/cluster/kinds.ts objectShapeProblem). The one
 * place an API object is narrowed to its view.
 */
function checkObject<K extends string>(o: unknown, expected: Expected<K>, where: string): asserts o is ViewOf<K> {
  const { kind } = expected;
  if (!isObject(o)) refuse(`${where} is ${typeName(o)}, not an object with metadata.name`);
  if (o.kind !== undefined && o.kind !== kind) refuse(`${where} is kind ${printable(valueText(o.kind), 100)}, not ${kind}`);
  const meta = o.metadata;
  if (!isObject(meta) || typeof meta.name !== 'string' || meta.name === '') refuse(`${where} has no metadata.name (metadata is ${typeName(meta)})`);
  if (expected.apiVersion !== undefined) o.apiVersion ??= expected.apiVersion;
  o.kind ??= kind;
  const problem = objectShapeProblem(o, kind);
  if (problem) {
    const name = `${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${meta.name}`;
    refuse(`${where} (${kind} ${printable(name, 200)}) is malformed: ${problem.path}: ${problem.message}`);
  }
}

/** A 2xx answer to a request for one object of `kind`: exactly that kind, checked (checkObject). */
export function objectAnswer<K extends string>(value: unknown, kind: K): ViewOf<K> {
  if (!isObject(value)) refuse(`expected a ${kind}, got ${typeName(value)}`);
  if (value.kind === undefined) refuse(`expected a ${kind}, got an object without kind`);
  if (value.kind !== kind) refuse(`expected a ${kind}, got kind ${printable(valueText(value.kind), 100)}`);
  checkObject(value, { kind }, `the ${kind}`);
  return value;
}

/** A 2xx answer whose body is any JSON object (a DELETE's Status, an eviction's answer). */
export function jsonObjectAnswer(value: unknown): Record<string, unknown> {
  if (!isObject(value)) refuse(`expected a JSON object, got ${typeName(value)}`);
  return value;
}

/** One page of a list: its objects (checked) and the list's metadata (resourceVersion, continue). */
export interface ListPage<T> {
  items: T[];
  metadata?: Record<string, unknown>;
}

/**
 * A 2xx answer to a LIST of `kind`: a `<Kind>List` with an array of objects (a null `items` is an
 * empty list, as Go encodes a nil slice), each checked (checkObject).
 */
export function listAnswer<K extends string>(value: unknown, expected: Expected<K>): ListPage<ViewOf<K>> {
  const want = `${expected.kind}List`;
  if (!isObject(value)) refuse(`expected a ${want}, got ${typeName(value)}`);
  if (value.kind === undefined) refuse(`expected a ${want}, got an object without kind`);
  if (value.kind !== want) refuse(`expected a ${want}, got kind ${printable(valueText(value.kind), 100)}`);
  const items = value.items === null ? [] : value.items;
  if (!Array.isArray(items)) refuse(`got a ${want} whose items is ${typeName(items)}, not an array`);
  const metadata = value.metadata;
  if (metadata !== undefined && !isObject(metadata)) refuse(`got a ${want} whose metadata is ${typeName(metadata)}`);
  const checked: ViewOf<K>[] = [];
  items.forEach((o: unknown, i: number) => {
    checkObject(o, expected, `item ${i + 1} of the ${want}`);
    checked.push(o);
  });
  return { items: checked, metadata };
}

/** A Kubernetes Status (the body of every error the API server itself returns), or null. */
export function statusOf(body: Buffer): Record<string, unknown> | null {
  if (!body.length || nestedDeeperThan(body.toString('utf8'), MAX_JSON_DEPTH)) return null;
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
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

/**
 * One event of a watch: an object of the kind watched (ADDED, MODIFIED, DELETED), a BOOKMARK
 * (its metadata carries the resourceVersion to resume from), or an ERROR (a Status).
 */
export type WatchEvent<T = KObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: { metadata: { resourceVersion?: string; annotations?: Record<string, string> } } }
  | { type: 'ERROR'; object: Record<string, unknown> };

/**
 * One line of a watch stream of `kind`: a JSON object `{type, object}` (apimachinery
 * pkg/apis/meta/v1 WatchEvent); objects of ADDED, MODIFIED and DELETED are objects of the kind
 * (checkObject), a BOOKMARK carries metadata (its resourceVersion), an ERROR carries a Status.
 */
export function parseWatchEvent<K extends string>(line: string, expected: Expected<K>): WatchEvent<ViewOf<K>> {
  const shown = () => preview(Buffer.from(line));
  if (nestedDeeperThan(line, MAX_JSON_DEPTH))
    throw new AnswerRefused(`a watch event is JSON nested deeper than ${MAX_JSON_DEPTH} levels: ${shown()}`, 'unexpected-answer');
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    throw new AnswerRefused(`a line of the watch stream is not JSON: ${shown()}`, 'not-json');
  }
  if (!isObject(ev) || typeof ev.type !== 'string' || !isObject(ev.object)) {
    throw new AnswerRefused(`a line of the watch stream is not a watch event ({type, object}): ${shown()}`, 'unexpected-answer');
  }
  const { type, object } = ev;
  switch (type) {
    case 'ERROR':
      return { type, object };
    case 'BOOKMARK': {
      const meta = object.metadata;
      if (!isObject(meta)) refuse(`a ${type} watch event has no metadata: ${shown()}`);
      const resourceVersion = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : undefined;
      const annotations = isObject(meta.annotations) ? stringsOf(meta.annotations) : undefined;
      return { type, object: { metadata: { resourceVersion, annotations } } };
    }
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      if (!isObject(object.metadata)) refuse(`a ${type} watch event has no metadata: ${shown()}`);
      if (typeof object.metadata.name !== 'string' || object.metadata.name === '') refuse(`a ${type} watch event has no metadata.name: ${shown()}`);
      checkObject(object, expected, `the object of a ${type} watch event`);
      return { type, object };
    default:
      throw new AnswerRefused(`a line of the watch stream is not a watch event ({type, object}): ${shown()}`, 'unexpected-answer');
  }
}

/** The string values of a mapping (annotations: the API server writes only strings). */
function stringsOf(m: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string') out[k] = v;
  return out;
}
