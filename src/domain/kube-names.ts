/**
 * Kubernetes name rules (k8s.io/apimachinery pkg/util/validation/validation.go): the names
 * bootcplan writes into objects for other tools (`fleet render argocd`: Application names,
 * label values, directory names) are checked here before they are written. Pure.
 */

/** IsDNS1123Label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_LABEL_MAX = 63;
/** IsDNS1123Subdomain: dot-separated DNS-1123 labels, at most 253. */
export const DNS1123_SUBDOMAIN_MAX = 253;
/** IsValidLabelValue: empty, or alphanumerics, '-', '_', '.', starting and ending alphanumeric, at most 63. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function isDns1123Label(s: unknown): s is string {
  return typeof s === 'string' && s.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: unknown): s is string {
  return typeof s === 'string' && s.length > 0 && s.length <= DNS1123_SUBDOMAIN_MAX && s.split('.').every((p) => DNS1123_LABEL.test(p));
}

/** Not a type guard: a string can fail it, and `!isLabelValue(name)` must leave `name` a string. */
export function isLabelValue(s: unknown): boolean {
  return typeof s === 'string' && s.length <= DNS1123_LABEL_MAX && LABEL_VALUE.test(s);
}
