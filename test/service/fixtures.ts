// A seed with two devices, for tests that need to see one device's data stay out of the other's reach.
import type { Seed } from '../../src/service';

export const A = { key: '5D4161963252F0EABB435339', token: '2A192A93FA7E383AE98803C7' };
export const B = { key: 'B0B0B0B0B0B0B0B0B0B0B0B0', token: 'B-token-0123456789abcdef' };

export const SEED: Seed = {
  subtypes: [
    {
      id_resource_subtype: 3,
      id_resource_type: 1,
      name: 'Binário',
      name_i18n: 'Binary',
      description: null,
      data_format_operation: 0,
      data_restriction_regex: null,
      data_restriction_begin_range: 0,
      data_restriction_end_range: 1,
    },
    {
      id_resource_subtype: 5,
      id_resource_type: 1,
      name: 'Temperatura',
      name_i18n: 'Temperature',
      description: 'Degrees Celsius',
      data_format_operation: 1,
      data_restriction_regex: null,
      data_restriction_begin_range: -40,
      data_restriction_end_range: 125,
    },
    {
      id_resource_subtype: 9,
      id_resource_type: 2,
      name: 'Liga/Desliga',
      name_i18n: 'On/Off',
      description: null,
      data_format_operation: 0,
      data_restriction_regex: 'on|off',
      data_restriction_begin_range: 0,
      data_restriction_end_range: 1,
    },
  ],
  devices: [
    {
      public_key: A.key,
      token: A.token,
      name: 'Test Device',
      resources: [
        { id_resource: 73, id_resource_subtype: 3, name: 'Input Binary Resource', description: '', lifetime: 15 },
        { id_resource: 74, id_resource_subtype: 5, name: 'Temperature', description: 'Bench', lifetime: 5 },
        { id_resource: 75, id_resource_subtype: 9, name: 'Fan', description: 'Switch', lifetime: 1 },
      ],
    },
    {
      public_key: B.key,
      token: B.token,
      name: 'Other Device',
      resources: [{ id_resource: 80, id_resource_subtype: 3, name: 'Other Binary', description: '', lifetime: 15 }],
    },
  ],
};
