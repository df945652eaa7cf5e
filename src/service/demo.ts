// The built-in demo device, used when no seed is given: a small greenhouse controller whose resources
// cover every kind of restriction (binary, signed and wide ranges, a regex) and two actuators, so a
// simulator has something to feed. Its key and token are fixed and printed: it is a local demo.
// The demo fleet is N such devices, for load tests: the first is the demo device, and device k's key,
// token and resource ids follow from k, so a simulator finds the same fleet from N alone.
import type { Seed, SeedDevice } from './seed';

export const DEMO_PUBLIC_KEY = '7A1F0C3E9B52D4E8A6C01F93';
export const DEMO_TOKEN = '5B8E2F71C4A09D36E1F7A2C8';

const SENSOR = 1;
const ACTUATOR = 2;

export const DEMO_SEED: Seed = {
  subtypes: [
    subtype(3, SENSOR, 'Binário', 'Binary', 0, 1),
    subtype(5, SENSOR, 'Temperatura', 'Temperature', -40, 125, 'Degrees Celsius'),
    subtype(6, SENSOR, 'Umidade', 'Humidity', 0, 100, 'Relative humidity, %'),
    subtype(7, SENSOR, 'Porcentagem', 'Percentage', 0, 100),
    subtype(8, SENSOR, 'Contador', 'Counter', 0, 2147483647, 'Monotonic pulse count'),
    { ...subtype(9, SENSOR, 'Liga/Desliga', 'On/Off', 0, 1, 'The text on or off'), data_restriction_regex: 'on|off' },
    { ...subtype(10, ACTUATOR, 'Saída binária', 'Binary Output', 0, 1), data_format_operation: 1 },
    { ...subtype(11, ACTUATOR, 'Ponto de ajuste', 'Setpoint', 5, 35, 'Degrees Celsius'), data_format_operation: 1 },
  ],
  // The dashboard offers writes to these resources only (docs/interface.md, Commands).
  command_types: [ACTUATOR],
  devices: [
    {
      public_key: DEMO_PUBLIC_KEY,
      token: DEMO_TOKEN,
      name: 'Demo Greenhouse Controller',
      resources: [
        resource(101, 3, 'Door Contact', 'Greenhouse door, 1 when open', 15),
        resource(102, 5, 'Air Temperature', 'Air temperature at bench height', 5),
        resource(103, 6, 'Air Humidity', 'Relative humidity of the air', 5),
        resource(104, 7, 'Soil Moisture', 'Soil moisture, bed 1', 10),
        resource(105, 8, 'Water Meter', 'Pulses of the irrigation water meter', 15),
        resource(106, 9, 'Circulation Fan', 'State of the circulation fan', 15),
        resource(107, 10, 'Irrigation Relay', 'Valve relay of the drip line', 15),
        resource(108, 11, 'Heating Setpoint', 'Night heating setpoint', 60),
      ],
    },
  ],
};

/** The demo device's resource ids, in seed order. */
export const DEMO_RESOURCES: number[] = DEMO_SEED.devices[0].resources.map((r) => r.id_resource);

/** The demo device's actuators: the resources whose subtype is of the actuator type. */
export const DEMO_ACTUATORS: number[] = DEMO_SEED.devices[0].resources
  .filter((r) => DEMO_SEED.subtypes.some((s) => s.id_resource_subtype === r.id_resource_subtype && s.id_resource_type === ACTUATOR))
  .map((r) => r.id_resource);

/** The most devices a demo fleet may have: the last one's resource ids are 10,000,001 to 10,000,008. */
export const MAX_DEMO_DEVICES = 100_000;

export interface DemoDevice {
  publicKey: string;
  token: string;
  resources: number[];
}

// Device k of a fleet (k ≥ 1) keeps the first 16 characters of the demo key and token and ends in k as 8
// hexadecimal digits; its resource ids are the demo's plus 100·k.
const FLEET_PREFIX = 16;
const FLEET_ID_STEP = 100;

function fleetName(value: string, k: number): string {
  return k === 0 ? value : value.slice(0, FLEET_PREFIX) + k.toString(16).toUpperCase().padStart(8, '0');
}

/** Device k (from 0) of the demo fleet; device 0 is the demo device. */
export function demoFleetDevice(k: number): DemoDevice {
  return { publicKey: fleetName(DEMO_PUBLIC_KEY, k), token: fleetName(DEMO_TOKEN, k), resources: DEMO_RESOURCES.map((id) => id + FLEET_ID_STEP * k) };
}

/** The seed of a demo fleet of `n` devices (1 to MAX_DEMO_DEVICES): the demo's subtypes and n copies of its device. */
export function demoFleetSeed(n: number): Seed {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_DEMO_DEVICES) throw new RangeError(`a demo fleet has 1 to ${MAX_DEMO_DEVICES} devices, not ${n}`);
  const demo = DEMO_SEED.devices[0];
  const devices: SeedDevice[] = [demo];
  for (let k = 1; k < n; k++) {
    const d = demoFleetDevice(k);
    devices.push({
      public_key: d.publicKey,
      token: d.token,
      name: demo.name + ' ' + (k + 1),
      resources: demo.resources.map((r, i) => ({ ...r, id_resource: d.resources[i] })),
    });
  }
  return { subtypes: DEMO_SEED.subtypes, devices, command_types: DEMO_SEED.command_types };
}

function subtype(id: number, type: number, name: string, nameI18n: string, begin: number, end: number, description: string | null = null) {
  return {
    id_resource_subtype: id,
    id_resource_type: type,
    name,
    name_i18n: nameI18n,
    description,
    data_format_operation: 0,
    data_restriction_regex: null as string | null,
    data_restriction_begin_range: begin,
    data_restriction_end_range: end,
  };
}

function resource(id: number, subtypeId: number, name: string, description: string, lifetime: number) {
  return { id_resource: id, id_resource_subtype: subtypeId, name, description, lifetime };
}
