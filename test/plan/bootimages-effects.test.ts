/**
 * Boot-image effects per MachineSet: selection (All, Partial, None, platform default, legacy),
 * skip reasons, and the image per platform read from the coreos-bootimages stream
 * (machine-config-operator pkg/controller/bootimage).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import {
  plan,
  MS,
  CP,
  REGION,
  OLD_AMI,
  NEW_AMI,
  machineSetWith,
  gcpProviderSpec,
  azureProviderSpec,
  vsphereProviderSpec,
  codes,
} from '../support/bootimages.ts';
import { machineSetObject, awsProviderSpec } from '../../src/sim/cluster-objects.ts';
import type { KObject } from '../../src/cluster/types.ts';
import type { TestObject } from '../support/cluster.ts';

const s = suite('bootimages: effects');
const all = { managedBootImages: { machineManagers: [MS('All')] } };
const GCP_NEW = 'projects/rhcos-cloud/global/images/rhcos-9-6-20261020-0-gcp-x86-64';
const effects = (spec: Record<string, unknown>, machineSets: KObject[], o: Record<string, unknown> = {}) =>
  plan(spec, { machineSets, ...o }).bootImages.machineSets;
const one = (spec: Record<string, unknown>, ms: KObject, o: Record<string, unknown> = {}) => effects(spec, [ms], o)[0];

// AWS: one MachineSet per case -> expected {to, skipped (substring)}
const westAmi = 'ami-0' + createHash('sha1').update('us-west-2').digest('hex').slice(0, 16);
const AWS: [string, KObject, string | null, string | null][] = [
  ['RHCOS AMI in the cluster region', machineSetObject('a', 'us-east-1a', REGION, OLD_AMI), NEW_AMI, null],
  ['another region of the stream', machineSetObject('b', 'us-west-2a', 'us-west-2', OLD_AMI), westAmi, null],
  ['already current', machineSetObject('c', 'us-east-1a', REGION, NEW_AMI), NEW_AMI, null],
  ['region not in the stream', machineSetObject('d', 'ap-south-1a', 'ap-south-1', OLD_AMI), null, 'No AWS images in region ap-south-1'],
  [
    'owner references',
    machineSetObject('e', 'us-east-1a', REGION, OLD_AMI, { ownerReferences: [{ apiVersion: 'hive.openshift.io/v1', kind: 'MachinePool', name: 'gpu' }] }),
    null,
    'has owner references (MachinePool/gpu)',
  ],
  [
    'Windows',
    machineSetObject('f', 'us-east-1a', REGION, OLD_AMI, { templateLabels: { 'machine.openshift.io/os-id': 'Windows' } }),
    null,
    'Windows MachineSet',
  ],
  [
    'osstream rhel-10',
    machineSetObject('g', 'us-east-1a', REGION, OLD_AMI, { labels: { 'machineconfiguration.openshift.io/osstream': 'rhel-10' } }),
    null,
    'another OS stream than rhel-9',
  ],
  [
    'osstream rhel-9 (accepted)',
    machineSetObject('h', 'us-east-1a', REGION, OLD_AMI, { labels: { 'machineconfiguration.openshift.io/osstream': 'rhel-9' } }),
    NEW_AMI,
    null,
  ],
  [
    'AMI by ARN (non-RHCOS or custom)',
    machineSetWith('i', { ...awsProviderSpec('us-east-1a', REGION, OLD_AMI, 'm6i.xlarge'), ami: { arn: 'arn:aws:ec2:us-east-1::image/ami-custom' } }),
    null,
    'ARN or filters',
  ],
  [
    'no placement.region',
    machineSetWith('j', { ...awsProviderSpec('us-east-1a', REGION, OLD_AMI, 'm6i.xlarge'), placement: {} }),
    null,
    'placement.region is not set',
  ],
  [
    'arm64 MachineSet, stream without aarch64',
    machineSetWith('k', awsProviderSpec('us-east-1a', REGION, OLD_AMI, 'm7g.xlarge'), {
      annotations: { 'capacity.cluster-autoscaler.kubernetes.io/labels': 'kubernetes.io/arch=arm64' },
    }),
    null,
    "does not have architecture 'aarch64'",
  ],
];
for (const [name, ms, to, skipped] of AWS) {
  s(`AWS: ${name}`, () => {
    const e = one(all, ms);
    const msSpec = (ms as TestObject).spec;
    assert.equal(e.to, to);
    if (skipped) assert.ok(e.skipped?.includes(skipped), `skipped "${e.skipped}" lacks "${skipped}"`);
    else assert.equal(e.skipped, null);
    assert.equal(e.from, msSpec.template.spec.providerSpec.value.ami?.id ?? msSpec.template.spec.providerSpec.value.ami?.arn);
  });
}

s('multi-architecture cluster: a MachineSet without the arch annotation is skipped', () => {
  const e = one(all, machineSetObject('m', 'us-east-1a', REGION, OLD_AMI), { multiArch: true });
  assert.match(e.skipped!, /multi-architecture/);
  const ok = one(
    all,
    machineSetWith('n', awsProviderSpec('us-east-1a', REGION, OLD_AMI, 'm6i.xlarge'), {
      annotations: { 'capacity.cluster-autoscaler.kubernetes.io/labels': 'kubernetes.io/arch=amd64,foo=bar' },
    }),
    { multiArch: true },
  );
  assert.equal(ok.to, NEW_AMI);
});

// Selection: which MachineSets the managers select.
const infra = machineSetObject('infra', 'us-east-1a', REGION, OLD_AMI, { labels: { role: 'infra' } });
const gpu = machineSetObject('gpu', 'us-east-1b', REGION, OLD_AMI, { labels: { role: 'gpu', 'boot-images': 'frozen' } });
const plain = machineSetObject('plain', 'us-east-1c', REGION, OLD_AMI);
const SELECTIONS: [string, Record<string, unknown>, Record<string, unknown>, string[]][] = [
  ['All', all, {}, ['gpu', 'infra', 'plain']],
  ['None', { managedBootImages: { machineManagers: [MS('None')] } }, {}, []],
  [
    'Partial matchLabels',
    { managedBootImages: { machineManagers: [MS('Partial', { machineResourceSelector: { matchLabels: { role: 'infra' } } })] } },
    {},
    ['infra'],
  ],
  [
    'Partial matchExpressions In',
    {
      managedBootImages: {
        machineManagers: [MS('Partial', { machineResourceSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['infra', 'gpu'] }] } })],
      },
    },
    {},
    ['gpu', 'infra'],
  ],
  [
    'Partial matchExpressions NotIn (absent key matches)',
    {
      managedBootImages: {
        machineManagers: [MS('Partial', { machineResourceSelector: { matchExpressions: [{ key: 'boot-images', operator: 'NotIn', values: ['frozen'] }] } })],
      },
    },
    {},
    ['infra', 'plain'],
  ],
  [
    'Partial Exists + DoesNotExist',
    {
      managedBootImages: {
        machineManagers: [
          MS('Partial', {
            machineResourceSelector: {
              matchExpressions: [
                { key: 'role', operator: 'Exists' },
                { key: 'boot-images', operator: 'DoesNotExist' },
              ],
            },
          }),
        ],
      },
    },
    {},
    ['infra'],
  ],
  ['CPMS entry only: machinesets default-on (AWS 4.22)', { managedBootImages: { machineManagers: [CP('None')] } }, {}, ['gpu', 'infra', 'plain']],
  ['no opinion, cluster status machinesets None', {}, { machineManagers: [MS('None')] }, []],
  ['no opinion, legacy [] in the cluster: migrated to None', {}, { machineManagers: [] }, []],
  ['no opinion, field absent: platform default AWS 4.22 = All', {}, { machineManagers: null, statusManagers: null }, ['gpu', 'infra', 'plain']],
  ['no opinion, field absent: AWS 4.18 not default-on', {}, { machineManagers: null, statusManagers: null, version: '4.18.9' }, []],
];
for (const [name, spec, o, selected] of SELECTIONS) {
  s(`selection: ${name}`, () => {
    const es = effects(spec, [infra, gpu, plain], o);
    assert.equal(
      es
        .filter((e) => !e.skipped)
        .map((e) => e.name)
        .sort(),
      selected,
    );
    for (const e of es.filter((x) => x.skipped)) assert.match(e.skipped!, /not opted in|not matched/);
    for (const e of es.filter((x) => !x.skipped)) assert.equal(e.to, NEW_AMI);
  });
}

s('a MachineSet not opted in says what opting in would write', () => {
  const e = one({ managedBootImages: { machineManagers: [MS('None')] } }, plain);
  assert.equal(e.skipped, `not opted in: machinesets selection mode None (opting in would write ${NEW_AMI})`);
  assert.equal([e.from, e.to], [OLD_AMI, null]);
});

// Platform defaults by version: Azure and vSphere default-on from 4.22, AWS and GCP from 4.19.
const DEFAULTS: [string, string, boolean][] = [
  ['AWS', '4.19.0', true],
  ['AWS', '4.18.5', false],
  ['GCP', '4.19.2', true],
  ['GCP', '4.18.0', false],
  ['Azure', '4.22.0', true],
  ['Azure', '4.21.5', false],
  ['VSphere', '4.22.1', true],
  ['VSphere', '4.21.0', false],
];
for (const [platform, version, on] of DEFAULTS) {
  s(`platform default: ${platform} ${version} MachineSets ${on ? 'opted in' : 'not opted in'}`, () => {
    const ms =
      platform === 'GCP'
        ? machineSetWith('x', gcpProviderSpec('projects/rhcos-cloud/global/images/old'))
        : platform === 'Azure'
          ? machineSetWith(
              'x',
              azureProviderSpec({ publisher: 'azureopenshift', offer: 'aro4', sku: '419-v2', version: '419.94.1', type: 'MarketplaceNoPlan' }),
            )
          : platform === 'VSphere'
            ? machineSetWith('x', vsphereProviderSpec('prod-rhcos-dc1'))
            : plain;
    const e = one({}, ms, { platform, version, machineManagers: null, statusManagers: null });
    assert.equal(e.skipped === null, on, JSON.stringify(e));
  });
}

const GCP: [string, string, string | null, string | null][] = [
  ['RHCOS image', 'projects/rhcos-cloud/global/images/rhcos-418-94-old', GCP_NEW, null],
  ['custom image', 'projects/my-project/global/images/golden-rhcos', null, 'non-RHCOS image projects/my-project/global/images/golden-rhcos'],
  ['already current', GCP_NEW, GCP_NEW, null],
];
for (const [name, image, to, skipped] of GCP) {
  s(`GCP: ${name}`, () => {
    const e = one(all, machineSetWith('g', gcpProviderSpec(image)), { platform: 'GCP' });
    assert.equal([e.from, e.to], [image, to]);
    if (skipped) assert.ok(e.skipped?.includes(skipped), e.skipped ?? '');
    else assert.equal(e.skipped, null);
  });
}

const AZ_GEN1 = 'azureopenshift:aro4:422-v1:422.96.20261020';
const AZ_GEN2 = 'azureopenshift:aro4:422-v2:422.96.20261020';
const AZURE: [string, Record<string, unknown>, Record<string, unknown>, string | null, string | null][] = [
  ['unpaid marketplace gen1', { publisher: 'azureopenshift', offer: 'aro4', sku: 'aro_419', version: '419.1', type: 'MarketplaceNoPlan' }, {}, AZ_GEN1, null],
  [
    'unpaid marketplace gen2 (sku v2)',
    { publisher: 'azureopenshift', offer: 'aro4', sku: '419-v2', version: '419.1', type: 'MarketplaceNoPlan' },
    {},
    AZ_GEN2,
    null,
  ],
  [
    'legacy uploaded image (gen2 in resourceID)',
    { resourceID: '/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/prod-gen2/versions/latest' },
    {},
    AZ_GEN2,
    null,
  ],
  ['legacy uploaded image (gen1)', { resourceID: '/resourceGroups/rg/providers/Microsoft.Compute/images/prod' }, {}, AZ_GEN1, null],
  [
    'paid OCP marketplace, stream without that variant',
    { publisher: 'redhat', offer: 'rh-ocp-worker', sku: 'rh-ocp-worker', version: '4.18.1', type: 'MarketplaceWithPlan' },
    {},
    null,
    'no Azure marketplace image for ocp hyperVGen2',
  ],
  [
    'unknown publisher',
    { publisher: 'contoso', offer: 'rhel', sku: '9', version: '1' },
    {},
    null,
    'could not determine azure marketplace variant, cannot update boot images',
  ],
  [
    'confidential VM',
    { publisher: 'azureopenshift', offer: 'aro4', sku: 'aro_419', version: '419.1', type: 'MarketplaceNoPlan' },
    { securityProfile: { settings: { securityType: 'ConfidentialVM' } } },
    null,
    'securityType ConfidentialVM',
  ],
];
for (const [name, image, extra, to, skipped] of AZURE) {
  s(`Azure: ${name}`, () => {
    const e = one(all, machineSetWith('z', azureProviderSpec(image, extra)), { platform: 'Azure' });
    assert.equal(e.to, to);
    if (skipped) assert.ok(e.skipped?.includes(skipped), e.skipped ?? '');
    else assert.equal(e.skipped, null);
  });
}

s('Azure: an image part a crafted MachineSet gives as an object is left out, never printed as [object Object]', () => {
  const image = { publisher: { name: 'azureopenshift' }, offer: 'aro4', sku: 'aro_419', version: '419.1', type: 'MarketplaceNoPlan' };
  const e = one(all, machineSetWith('z', azureProviderSpec(image)), { platform: 'Azure' });
  assert.not.match(JSON.stringify(e), /object Object/);
  assert.is(e.from, ':aro4:aro_419:419.1');
});

s('vSphere: the template name, refreshed from the stream OVA', () => {
  const e = one(all, machineSetWith('v', vsphereProviderSpec('prod-east-x7k2p-rhcos-dc1')), { platform: 'VSphere' });
  assert.equal([e.from, e.to, e.skipped], ['prod-east-x7k2p-rhcos-dc1', 'prod-east-x7k2p-rhcos-dc1 (RHCOS 9.6.20261020-0 OVA)', null]);
});

s('unsupported platform: no effects listed; unreadable stream: skipped with the reason and a warning', () => {
  const bm = plan({}, { platform: 'BareMetal', machineManagers: [MS('All')] }).bootImages;
  assert.equal(bm.machineSets, []);
  assert.match(bm.controlPlaneMachineSet!.why, /not managed on platform BareMetal/);
  const r = plan(all, { noConfigMap: true });
  assert.match(r.bootImages.machineSets[0].skipped!, /coreos-bootimages is not in the snapshot/);
  assert.equal(codes(r.diagnostics), ['boot-images-stream-unavailable']);
});

s.run();
