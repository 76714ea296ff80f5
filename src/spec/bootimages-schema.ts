/**
 * Static validation of spec.managedBootImages and spec.bootImageSkewEnforcement, with the
 * shape of MachineConfiguration spec (openshift/api operator/v1 types_machineconfiguration.go).
 * Rules that depend on the cluster (feature gates, platform, skew status) live in
 * src/domain/bootimages.ts.
 */
import type { Schema, ObjectSchema } from './schema.ts';

export const MACHINE_MANAGER_RESOURCES = ['machinesets', 'controlplanemachinesets'] as const;
export const MACHINE_MANAGER_API_GROUPS = ['machine.openshift.io'] as const;
export const SELECTION_MODES = ['All', 'Partial', 'None'] as const;

const labelSelectorSchema: ObjectSchema = {
  type: 'object',
  fields: {
    matchLabels: { type: 'map', values: { type: 'string' } },
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        fields: {
          key: { type: 'string', minLength: 1 },
          operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
          values: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
};

export const machineManagerSchema: ObjectSchema = {
  type: 'object',
  required: ['resource', 'apiGroup', 'selection'],
  fields: {
    resource: { type: 'string', enum: MACHINE_MANAGER_RESOURCES },
    apiGroup: { type: 'string', enum: MACHINE_MANAGER_API_GROUPS },
    selection: {
      type: 'object',
      required: ['mode'],
      fields: {
        mode: { type: 'string', enum: SELECTION_MODES },
        partial: {
          type: 'object',
          required: ['machineResourceSelector'],
          fields: { machineResourceSelector: labelSelectorSchema },
        },
      },
    },
  },
};

export const managedBootImagesSchema: Schema = {
  type: 'object',
  fields: {
    machineManagers: { type: 'array', items: machineManagerSchema, maxItems: 5 },
  },
};

export const bootImageSkewEnforcementSchema: Schema = {
  type: 'object',
  required: ['mode'],
  fields: {
    // Automatic is a status-only value: the API accepts only Manual or None in spec
    // (openshift/api operator/v1 BootImageSkewEnforcementConfig).
    mode: { type: 'string', enum: ['Manual', 'None'] },
    manual: {
      type: 'object',
      required: ['mode'],
      fields: {
        mode: { type: 'string', enum: ['OCPVersion', 'RHCOSVersion'] },
        ocpVersion: { type: 'string' },
        rhcosVersion: { type: 'string' },
      },
    },
  },
};
