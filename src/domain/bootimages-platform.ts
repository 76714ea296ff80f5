/**
 * What the MCO boot image controller would write into one providerSpec, per platform
 * (openshift/machine-config-operator pkg/controller/bootimage/platform_helpers.go, azure
 * helpers, vsphere helpers). Pure: reads the providerSpec and the stream, never a cloud API.
 */
import { type CoreosStream, awsRegionImage, gcpImage, azureMarketplaceImage, vmwareRelease } from './stream.ts';
import { isPlainObject } from '../base/schema.ts';
import { valueText } from '../base/json-text.ts';

/** Platforms whose MachineSets the MCO updates (ctrlcommon.CheckBootImagePlatform; sync_test.go). */
export const BOOT_IMAGE_PLATFORMS = ['AWS', 'GCP', 'VSphere', 'Azure'] as const;
/** Platforms whose ControlPlaneMachineSet the MCO updates (cpms_helpers.go). */
export const CPMS_BOOT_IMAGE_PLATFORMS = ['AWS', 'GCP', 'Azure'] as const;

export interface Prediction {
  /** The boot image in the providerSpec now, in the platform's own notation. */
  from: string | null;
  /** What the MCO will write; equal to `from` when it is already current; null when skipped. */
  to: string | null;
  skipped: string | null;
}

const skip = (from: string | null, reason: string): Prediction => ({ from, to: null, skipped: reason });

/**
 * A field of a providerSpec, through mappings only (a providerSpec is the platform's own JSON:
 * openshift/api machine/v1beta1 AWSMachineProviderConfig, GCPMachineProviderSpec, ...; nothing
 * checked it but the API server's schema, which lets any JSON through there).
 */
function at(v: unknown, ...keys: string[]): unknown {
  let cur = v;
  for (const k of keys) cur = isPlainObject(cur) ? cur[k] : undefined;
  return cur;
}

/** What a providerSpec field holds when it is shown: as it is for a string, else nothing. */
const shown = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The boot image now, for display, whatever the platform's notation. */
export function currentImageOf(platform: string | null, value: unknown): string | null {
  if (!isPlainObject(value)) return null;
  switch (platform) {
    case 'AWS':
      return shown(at(value, 'ami', 'id') ?? at(value, 'ami', 'arn') ?? null);
    case 'GCP':
      return shown(bootDisks(value).find((d) => d.boot)?.image ?? null);
    case 'Azure':
      return azureImageText(value.image);
    case 'VSphere':
      return shown(value.template);
    default:
      return null;
  }
}

/** providerSpec.disks, the entries that are mappings. */
function bootDisks(ps: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(ps.disks) ? ps.disks.filter(isPlainObject) : [];
}

function azureImageText(img: unknown): string | null {
  if (!isPlainObject(img)) return null;
  if (typeof img.resourceID === 'string' && img.resourceID) return img.resourceID;
  // Each part as the MachineSet has it when it is a string; a crafted object is no part of an image name.
  const part = (v: unknown) => (typeof v === 'string' ? v : '');
  if (img.publisher || img.offer || img.sku) return `${part(img.publisher)}:${part(img.offer)}:${part(img.sku)}:${part(img.version)}`;
  return null;
}

interface PredictContext {
  platform: string | null;
  stream: CoreosStream;
  /** RPM arch (x86_64, aarch64, ...) of the machines this providerSpec creates. */
  arch: string;
  /** Infrastructure status.infrastructureName (vSphere template names derive from it). */
  infraName: string | null;
}

export function predictProviderSpec(ps: unknown, ctx: PredictContext): Prediction {
  const from = currentImageOf(ctx.platform, ps);
  if (!isPlainObject(ps)) return skip(from, 'no providerSpec.value');
  switch (ctx.platform) {
    case 'AWS':
      return predictAws(ps, ctx, from);
    case 'GCP':
      return predictGcp(ps, ctx, from);
    case 'Azure':
      return predictAzure(ps, ctx, from);
    case 'VSphere':
      return predictVsphere(ps, ctx, from);
    default:
      return skip(from, `platform ${ctx.platform ?? 'unknown'} has no managed boot images`);
  }
}

function predictAws(ps: Record<string, unknown>, ctx: PredictContext, from: string | null): Prediction {
  const region = at(ps, 'placement', 'region');
  if (!region) return skip(from, 'providerSpec.placement.region is not set');
  // An AMI referenced by ARN or filters (ami.id nil) is left alone (OCPBUGS-57506).
  if (!at(ps, 'ami', 'id')) return skip(from, 'the AMI is referenced by ARN or filters, not ami.id (non-RHCOS or custom image)');
  const t = awsRegionImage(ctx.stream, ctx.arch, valueText(region));
  if (!t.ok) return skip(from, t.reason);
  return { from, to: t.value.image, skipped: null };
}

/** GCP: only boot disks whose image is an RHCOS image (platform_helpers.go). */
const GCP_RHCOS_PREFIX = 'projects/rhcos-cloud/global/images';

function predictGcp(ps: Record<string, unknown>, ctx: PredictContext, from: string | null): Prediction {
  const boot = bootDisks(ps).filter((d) => d.boot === true);
  if (!boot.length) return skip(from, 'no boot disk in providerSpec.disks');
  const custom = boot.find((d) => typeof d.image !== 'string' || !d.image.startsWith(GCP_RHCOS_PREFIX));
  if (custom)
    return skip(
      from,
      `non-RHCOS image ${custom.image === undefined || custom.image === null ? '(none)' : valueText(custom.image)} (not under ${GCP_RHCOS_PREFIX})`,
    );
  const t = gcpImage(ctx.stream, ctx.arch);
  if (!t.ok) return skip(from, t.reason);
  return { from, to: t.value.image, skipped: null };
}

const AZURE_VARIANTS: Record<string, string> = {
  'redhat/rh-ocp-worker': 'ocp',
  'redhat/rh-opp-worker': 'opp',
  'redhat/rh-oke-worker': 'oke',
  'redhat-limited/rh-ocp-worker': 'ocp-emea',
  'redhat-limited/rh-opp-worker': 'opp-emea',
  'redhat-limited/rh-oke-worker': 'oke-emea',
};

function predictAzure(ps: Record<string, unknown>, ctx: PredictContext, from: string | null): Prediction {
  if (ctx.arch === 'ppc64le' || ctx.arch === 's390x') return skip(from, `architecture ${ctx.arch} has no Azure images`);
  const securityType = at(ps, 'securityProfile', 'settings', 'securityType');
  if (securityType) {
    return skip(from, `securityProfile.settings.securityType ${valueText(securityType)} is set (confidential VM / trusted launch images are not managed)`);
  }
  const img: Record<string, unknown> = isPlainObject(ps.image) ? ps.image : {};
  const resourceID = typeof img.resourceID === 'string' ? img.resourceID : '';
  const legacy = resourceID !== '';
  // determineAzureVariant: legacy uploads and "azureopenshift" (ARO, unpaid) -> no-purchase-plan.
  let variant: string | undefined;
  if (legacy || img.publisher === 'azureopenshift') variant = 'no-purchase-plan';
  else variant = AZURE_VARIANTS[`${valueText(img.publisher)}/${valueText(img.offer)}`];
  if (!variant) return skip(from, 'could not determine azure marketplace variant, cannot update boot images');
  const sku = typeof img.sku === 'string' ? img.sku : '';
  const gen2 = legacy ? resourceID.includes('gen2') : img.type === 'MarketplaceNoPlan' ? sku.includes('v2') || ctx.arch === 'aarch64' : !sku.includes('gen1');
  const t = azureMarketplaceImage(ctx.stream, ctx.arch, variant, gen2);
  if (!t.ok) return skip(from, t.reason);
  const v = t.value;
  return { from, to: `${v.publisher}:${v.offer}:${v.sku}:${v.version}`, skipped: null };
}

function predictVsphere(_ps: Record<string, unknown>, ctx: PredictContext, from: string | null): Prediction {
  // The MCO imports the stream's OVA into vCenter and swaps it in under the template name
  // (vsphere helpers resolveExistingTemplateVM: providerSpec.template, else
  // "<infraID>-rhcos-<failure domain>"). What the template holds now is only visible in vCenter.
  const t = vmwareRelease(ctx.stream, ctx.arch);
  if (!t.ok) return skip(from, t.reason);
  const name = from || `${ctx.infraName ?? '<infraID>'}-rhcos`;
  return { from, to: `${name} (RHCOS ${t.value} OVA)`, skipped: null };
}
