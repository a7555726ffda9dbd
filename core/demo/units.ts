/**
 * The demo's unit converter (core/demo/demo-apis.ts): units by dimension, each a factor to the dimension's base unit
 * (temperatures, which are not proportional, convert through kelvin). Pure functions; the demo upstream serves them.
 */

export interface Unit {
  symbol: string;
  name: string;
  /** How many base units one of this unit is (absent for temperatures). */
  factor?: number;
}

export interface Dimension {
  name: string;
  base: string;
  units: Unit[];
}

const u = (symbol: string, name: string, factor?: number): Unit =>
  factor === undefined ? { symbol, name } : { symbol, name, factor };

export const DIMENSIONS: readonly Dimension[] = [
  {
    name: 'length',
    base: 'm',
    units: [
      u('m', 'metre', 1),
      u('km', 'kilometre', 1000),
      u('cm', 'centimetre', 0.01),
      u('mm', 'millimetre', 0.001),
      u('mi', 'mile', 1609.344),
      u('yd', 'yard', 0.9144),
      u('ft', 'foot', 0.3048),
      u('in', 'inch', 0.0254),
      u('nmi', 'nautical mile', 1852),
    ],
  },
  {
    name: 'mass',
    base: 'kg',
    units: [
      u('kg', 'kilogram', 1),
      u('g', 'gram', 0.001),
      u('mg', 'milligram', 0.000001),
      u('t', 'tonne', 1000),
      u('lb', 'pound', 0.45359237),
      u('oz', 'ounce', 0.028349523125),
      u('st', 'stone', 6.35029318),
    ],
  },
  {
    name: 'volume',
    base: 'l',
    units: [
      u('l', 'litre', 1),
      u('ml', 'millilitre', 0.001),
      u('m3', 'cubic metre', 1000),
      u('gal', 'US gallon', 3.785411784),
      u('qt', 'US quart', 0.946352946),
      u('pt', 'US pint', 0.473176473),
      u('cup', 'US cup', 0.2365882365),
      u('floz', 'US fluid ounce', 0.0295735295625),
    ],
  },
  {
    name: 'temperature',
    base: 'k',
    units: [u('c', 'degree Celsius'), u('f', 'degree Fahrenheit'), u('k', 'kelvin')],
  },
  {
    name: 'time',
    base: 's',
    units: [
      u('s', 'second', 1),
      u('min', 'minute', 60),
      u('h', 'hour', 3600),
      u('d', 'day', 86400),
      u('wk', 'week', 604800),
    ],
  },
  {
    name: 'speed',
    base: 'm/s',
    units: [
      u('m/s', 'metre per second', 1),
      u('km/h', 'kilometre per hour', 1 / 3.6),
      u('mph', 'mile per hour', 0.44704),
      u('kn', 'knot', 1852 / 3600),
    ],
  },
  {
    name: 'data',
    base: 'b',
    units: [
      u('b', 'byte', 1),
      u('kb', 'kilobyte', 1e3),
      u('mb', 'megabyte', 1e6),
      u('gb', 'gigabyte', 1e9),
      u('tb', 'terabyte', 1e12),
      u('kib', 'kibibyte', 1024),
      u('mib', 'mebibyte', 1024 ** 2),
      u('gib', 'gibibyte', 1024 ** 3),
      u('tib', 'tebibyte', 1024 ** 4),
    ],
  },
  {
    name: 'area',
    base: 'm2',
    units: [
      u('m2', 'square metre', 1),
      u('km2', 'square kilometre', 1e6),
      u('ha', 'hectare', 1e4),
      u('acre', 'acre', 4046.8564224),
      u('ft2', 'square foot', 0.09290304),
      u('mi2', 'square mile', 2589988.110336),
    ],
  },
];

const BY_SYMBOL = new Map<string, { unit: Unit; dimension: Dimension }>();
for (const dimension of DIMENSIONS) for (const unit of dimension.units) BY_SYMBOL.set(unit.symbol, { unit, dimension });

/** Symbols are case-insensitive; a few spellings people type are accepted too. */
const ALIASES: Record<string, string> = {
  meter: 'm',
  metre: 'm',
  meters: 'm',
  km: 'km',
  miles: 'mi',
  mile: 'mi',
  feet: 'ft',
  foot: 'ft',
  inch: 'in',
  inches: 'in',
  '°c': 'c',
  celsius: 'c',
  '°f': 'f',
  fahrenheit: 'f',
  kelvin: 'k',
  kph: 'km/h',
  kmh: 'km/h',
  kt: 'kn',
  knots: 'kn',
  kg: 'kg',
  pounds: 'lb',
  lbs: 'lb',
  liter: 'l',
  litre: 'l',
  gallon: 'gal',
  gallons: 'gal',
};

export function findUnit(raw: string): { unit: Unit; dimension: Dimension } | undefined {
  const key = raw.trim().toLowerCase();
  return BY_SYMBOL.get(ALIASES[key] ?? key);
}

function toKelvin(value: number, symbol: string): number {
  if (symbol === 'c') return value + 273.15;
  if (symbol === 'f') return ((value - 32) * 5) / 9 + 273.15;
  return value;
}

function fromKelvin(kelvin: number, symbol: string): number {
  if (symbol === 'c') return kelvin - 273.15;
  if (symbol === 'f') return ((kelvin - 273.15) * 9) / 5 + 32;
  return kelvin;
}

/** Ten significant digits: enough for any conversion here, without binary noise like 0.30000000000000004. */
const round = (n: number): number => Number(n.toPrecision(10));

export type Conversion =
  | { ok: true; value: number; from: string; to: string; dimension: string; result: number }
  | { ok: false; message: string };

export function convert(value: number, fromRaw: string, toRaw: string): Conversion {
  const from = findUnit(fromRaw);
  const to = findUnit(toRaw);
  if (!from) return { ok: false, message: `Unknown unit "${fromRaw}": GET /units lists them.` };
  if (!to) return { ok: false, message: `Unknown unit "${toRaw}": GET /units lists them.` };
  if (from.dimension !== to.dimension) {
    return {
      ok: false,
      message: `Cannot convert ${from.dimension.name} (${from.unit.symbol}) to ${to.dimension.name} (${to.unit.symbol}).`,
    };
  }
  const result =
    from.dimension.name === 'temperature'
      ? fromKelvin(toKelvin(value, from.unit.symbol), to.unit.symbol)
      : (value * from.unit.factor!) / to.unit.factor!;
  return {
    ok: true,
    value,
    from: from.unit.symbol,
    to: to.unit.symbol,
    dimension: from.dimension.name,
    result: round(result),
  };
}
