// The service seed every scenario and the footprint bench start from (the seed format of docs/service.md): a few
// resources of known subtypes, short lifetimes so presence changes within a scenario, and a second device
// whose resource the first device must not see.
import type { Seed } from '../../src/service/seed';

export const DEVICE = { publicKey: 'SCENARIO-DEVICE-01', token: 'scenario-token-5f3a9c' } as const;

/** The first device's resources, by role. */
export const R = {
  /** Counters: numeric subtype [0, 10^9]; sensors that count up, so every reading is unique. */
  counterA: 11,
  counterB: 12,
  /** Binary subtype [0, 1]: the actuator. */
  relay: 13,
  /** Regex subtype `on|off`. */
  mode: 14,
  /** Numeric subtype [0, 100]. */
  percent: 15,
  /** Regex subtype: any text of at most 40 characters. */
  label: 16,
  /** Belongs to the other device. */
  foreign: 21,
} as const;

/** Eight more counters (numeric [0, 10^9]): the sensors of the footprint bench's agent. */
export const GAUGES = [31, 32, 33, 34, 35, 36, 37, 38];

/** The service's wall clock at virtual time 0; it follows the scenario's virtual clock from there. */
export const SERVICE_EPOCH_MS = Date.UTC(2026, 0, 1);

/** Resource lifetime in minutes: the agent's presence reads come every half of it by default. */
export const LIFETIME_MINUTES = 1;

const subtype = (id: number, name: string, begin: number, end: number, regex: string | null = null) => ({
  id_resource_subtype: id,
  id_resource_type: 1,
  name,
  name_i18n: name,
  description: null,
  data_format_operation: 0,
  data_restriction_regex: regex,
  data_restriction_begin_range: begin,
  data_restriction_end_range: end,
});

const resource = (id: number, subtypeId: number, name: string) => ({
  id_resource: id,
  id_resource_subtype: subtypeId,
  name,
  description: '',
  lifetime: LIFETIME_MINUTES,
});

export const SCENARIO_SEED: Seed = {
  subtypes: [subtype(1, 'Counter', 0, 1e9), subtype(2, 'Binary', 0, 1), subtype(3, 'Mode', 0, 0, 'on|off'), subtype(4, 'Percent', 0, 100), subtype(5, 'Text', 0, 0, '.{0,40}')],
  devices: [
    {
      public_key: DEVICE.publicKey,
      token: DEVICE.token,
      name: 'Scenario device',
      resources: [
        resource(R.counterA, 1, 'Counter A'),
        resource(R.counterB, 1, 'Counter B'),
        resource(R.relay, 2, 'Relay'),
        resource(R.mode, 3, 'Mode'),
        resource(R.percent, 4, 'Percent'),
        resource(R.label, 5, 'Label'),
        ...GAUGES.map((id) => resource(id, 1, 'Gauge ' + id)),
      ],
    },
    { public_key: 'SCENARIO-DEVICE-02', token: 'other-token-77e1', name: 'Other device', resources: [resource(R.foreign, 1, 'Foreign')] },
  ],
};
