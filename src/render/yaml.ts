/**
 * Documents as YAML (`-o yaml`): the same value `-o json` prints, in YAML, with the same
 * guarantee as jsonText (vocabulary.ts): a string that holds a character a terminal or a
 * viewer would act on (bidi and other format characters, DEL, C1 controls) is written double
 * quoted with `\uXXXX` escapes, so every YAML parser reads back the exact value. Pure.
 */
import { Document, Scalar, visit } from 'yaml';

/** DEL, C1 controls and format characters; C0 controls the yaml library escapes itself. */
const INVISIBLE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/u;
const INVISIBLE_ALL = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

const escapeCodeUnits = (ch: string) => [...Array(ch.length).keys()].map((i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

export function yamlText(value: unknown): string {
  const doc = new Document(value, { aliasDuplicateObjects: false });
  let quoted = false;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && INVISIBLE.test(node.value)) {
        node.type = Scalar.QUOTE_DOUBLE;
        quoted = true;
      }
    },
  });
  const text = doc.toString({ lineWidth: 0 });
  // Only double-quoted scalars hold such characters now, where `\uXXXX` is an escape.
  return quoted ? text.replace(INVISIBLE_ALL, escapeCodeUnits) : text;
}
