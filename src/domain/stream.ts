/**
 * The CoreOS stream metadata that the installer and the MCO keep in the ConfigMap
 * openshift-machine-config-operator/coreos-bootimages (key `stream`), as defined by
 * coreos/stream-metadata-go (stream/stream.go, stream/rhcos/rhcos.go). Pure lookups only.
 */
import type { KObject } from '../cluster/types.ts';
import { type Ctx, type ObjectSchema, type Schema, isPlainObject, validate } from '../base/schema.ts';
import { messageOf } from '../base/errors.ts';

interface AzureMarketplaceImage {
  publisher: string;
  offer: string;
  sku: string;
  version: string;
}

export interface CoreosStream {
  /** The stream's name (stream-metadata-go writes it always; a hand-written one may lack it). */
  stream?: string;
  architectures: Record<
    string,
    {
      artifacts?: Record<string, { release?: string; formats?: Record<string, unknown> }>;
      images?: {
        aws?: { regions?: Record<string, { release?: string; image?: string }> };
        gcp?: { release?: string; project?: string; family?: string; name?: string };
        [k: string]: unknown;
      };
      'rhel-coreos-extensions'?: {
        marketplace?: { azure?: Record<string, { hyperVGen1?: AzureMarketplaceImage; hyperVGen2?: AzureMarketplaceImage }> };
        [k: string]: unknown;
      };
    }
  >;
}

type StreamRead = { ok: true; stream: CoreosStream; releaseVersion: string | null } | { ok: false; reason: string };

/** Reads `data.stream` (JSON) and `data.releaseVersion` of the coreos-bootimages ConfigMap. */
export function readStream(cm: KObject | null): StreamRead {
  if (!cm) return { ok: false, reason: 'the ConfigMap openshift-machine-config-operator/coreos-bootimages is not in the snapshot' };
  const text = cm.data?.stream;
  if (typeof text !== 'string' || !text) return { ok: false, reason: 'coreos-bootimages has no "stream" key' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `coreos-bootimages "stream" is not valid JSON (${messageOf(err)})` };
  }
  if (!isPlainObject(parsed) || !isPlainObject(parsed.architectures)) {
    return { ok: false, reason: 'coreos-bootimages "stream" has no "architectures"' };
  }
  let problem = '';
  if (
    !isCoreosStream(parsed, (p) => {
      problem = p;
    })
  )
    return { ok: false, reason: `coreos-bootimages "stream" is malformed: ${problem}` };
  return { ok: true, stream: parsed, releaseVersion: cm.data?.releaseVersion ?? null };
}

// The fields CoreosStream names, as stream-metadata-go writes them (strings where read).
const str: Schema = { type: 'string', nullable: true };
const open = (fields: Record<string, Schema>): ObjectSchema => ({ type: 'object', open: true, nullable: true, fields });
const marketplaceImage = open({ publisher: { type: 'string' }, offer: { type: 'string' }, sku: { type: 'string' }, version: { type: 'string' } });
const STREAM_SCHEMA: ObjectSchema = open({
  stream: str,
  architectures: {
    type: 'map',
    values: open({
      artifacts: { type: 'map', nullable: true, values: open({ release: str }) },
      images: open({
        aws: open({ regions: { type: 'map', nullable: true, values: open({ release: str, image: str }) } }),
        gcp: open({ release: str, project: str, family: str, name: str }),
      }),
      'rhel-coreos-extensions': open({
        marketplace: open({ azure: { type: 'map', nullable: true, values: open({ hyperVGen1: marketplaceImage, hyperVGen2: marketplaceImage }) } }),
      }),
    }),
  },
});

/**
 * True when `doc` has the fields CoreosStream names, of their types (STREAM_SCHEMA); else false,
 * and `why` is told the first field that is not ("path: what is wrong").
 */
function isCoreosStream(doc: Record<string, unknown>, why: (problem: string) => void): doc is Record<string, unknown> & CoreosStream {
  let first: string | null = null;
  const ctx: Ctx = {
    map: null,
    report: (d) => {
      first ??= `${d.path}: ${d.message}`;
    },
  };
  validate(STREAM_SCHEMA, doc, '', ctx);
  if (first !== null) why(first);
  return first === null;
}

/** Kubernetes arch label value -> RPM arch used as the stream key (MCO bootimage helpers). */
export const RPM_ARCH: Record<string, string> = { amd64: 'x86_64', arm64: 'aarch64', s390x: 's390x', ppc64le: 'ppc64le' };

type Lookup<T> = { ok: true; value: T } | { ok: false; reason: string };

function arch(stream: CoreosStream, a: string): Lookup<CoreosStream['architectures'][string]> {
  const v = stream.architectures[a];
  // stream-metadata-go: `stream:%s does not have architecture '%s'`
  return v ? { ok: true, value: v } : { ok: false, reason: `stream:${stream.stream} does not have architecture '${a}'` };
}

/** stream.GetAwsRegionImage(arch, region): architectures.<arch>.images.aws.regions.<region>.image */
export function awsRegionImage(stream: CoreosStream, a: string, region: string): Lookup<{ image: string; release: string | null }> {
  const ar = arch(stream, a);
  if (!ar.ok) return ar;
  const r = ar.value.images?.aws?.regions?.[region];
  if (!r?.image) return { ok: false, reason: `stream:${stream.stream} arch:${a}: No AWS images in region ${region}` };
  return { ok: true, value: { image: r.image, release: r.release ?? null } };
}

/** GCP: `projects/<images.gcp.project>/global/images/<images.gcp.name>` (MCO platform_helpers.go). */
export function gcpImage(stream: CoreosStream, a: string): Lookup<{ image: string; release: string | null }> {
  const ar = arch(stream, a);
  if (!ar.ok) return ar;
  const g = ar.value.images?.gcp;
  if (!g?.project || !g.name) return { ok: false, reason: `stream:${stream.stream} arch:${a}: no GCP image` };
  return { ok: true, value: { image: `projects/${g.project}/global/images/${g.name}`, release: g.release ?? null } };
}

/** Azure: architectures.<arch>.rhel-coreos-extensions.marketplace.azure.<variant>.<hyperVGen1|hyperVGen2> */
export function azureMarketplaceImage(stream: CoreosStream, a: string, variant: string, gen2: boolean): Lookup<AzureMarketplaceImage> {
  const ar = arch(stream, a);
  if (!ar.ok) return ar;
  const az = ar.value['rhel-coreos-extensions']?.marketplace?.azure;
  if (!az) return { ok: false, reason: `stream:${stream.stream} arch:${a}: no Azure marketplace images (e.g. OKD)` };
  const v = az[variant]?.[gen2 ? 'hyperVGen2' : 'hyperVGen1'];
  if (!v) return { ok: false, reason: `stream:${stream.stream} arch:${a}: no Azure marketplace image for ${variant} ${gen2 ? 'hyperVGen2' : 'hyperVGen1'}` };
  return { ok: true, value: v };
}

/** vSphere: architectures.<arch>.artifacts.vmware (release and the OVA the MCO imports). */
export function vmwareRelease(stream: CoreosStream, a: string): Lookup<string> {
  const ar = arch(stream, a);
  if (!ar.ok) return ar;
  const v = ar.value.artifacts?.vmware;
  if (!v?.release) return { ok: false, reason: `stream:${stream.stream} arch:${a}: no vmware OVA artifact` };
  return { ok: true, value: v.release };
}
