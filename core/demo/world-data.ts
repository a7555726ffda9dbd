/**
 * The demo's world data lookup (core/demo/demo-apis.ts) over open data bundled with Node itself: the Unicode CLDR
 * (country and currency names in every language ICU carries) and the IANA time zone database, through `Intl`. No
 * file, no network: the same answers offline.
 */

/** CLDR region codes that are groupings or private-use placeholders, not countries or territories. */
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'QO', 'UN', 'XA', 'XB', 'ZZ']);
/** The languages a country's names are given in. */
const NAME_LANGUAGES = ['en', 'fr', 'es', 'de', 'pt', 'ru', 'zh', 'ja', 'ar', 'hi'] as const;

const regionNames = new Map<string, Intl.DisplayNames>();
function regionsIn(lang: string): Intl.DisplayNames {
  let names = regionNames.get(lang);
  if (!names) {
    names = new Intl.DisplayNames([lang, 'en'], { type: 'region', fallback: 'none' });
    regionNames.set(lang, names);
  }
  return names;
}

/** Every two-letter code CLDR names (ISO 3166-1 alpha-2 and a few exceptional reservations), computed once. */
const COUNTRY_CODES: readonly string[] = (() => {
  const english = regionsIn('en');
  const codes: string[] = [];
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      if (!NOT_COUNTRIES.has(code) && english.of(code) !== undefined) codes.push(code);
    }
  }
  return codes;
})();

/** The flag emoji: the code's letters as regional indicator symbols. */
function flag(code: string): string {
  return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/** A BCP 47 language tag Intl accepts, else undefined. */
export function language(raw: string | null): string | undefined {
  const tag = (raw ?? 'en').trim() || 'en';
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

export function countries(lang: string): { code: string; name: string; flag: string }[] {
  const names = regionsIn(lang);
  return COUNTRY_CODES.map((code) => ({ code, name: names.of(code) ?? code, flag: flag(code) }));
}

export function country(
  rawCode: string,
  lang: string,
): { code: string; name: string; flag: string; names: Record<string, string> } | undefined {
  const code = rawCode.trim().toUpperCase();
  if (!COUNTRY_CODES.includes(code)) return undefined;
  const names: Record<string, string> = {};
  for (const l of NAME_LANGUAGES) names[l] = regionsIn(l).of(code) ?? code;
  return { code, name: regionsIn(lang).of(code) ?? code, flag: flag(code), names };
}

export function currencies(lang: string): { code: string; name: string; symbol: string }[] {
  const names = new Intl.DisplayNames([lang, 'en'], { type: 'currency' });
  return Intl.supportedValuesOf('currency').map((code) => {
    const parts = new Intl.NumberFormat('en', { style: 'currency', currency: code, currencyDisplay: 'narrowSymbol' });
    const symbol = parts.formatToParts(1).find((p) => p.type === 'currency')?.value ?? code;
    return { code, name: names.of(code) ?? code, symbol };
  });
}

const ZONES = new Set(Intl.supportedValuesOf('timeZone'));

/** The time now in an IANA zone: local date-time with its offset, the offset alone, the weekday. */
export function timeIn(
  zone: string,
  now: Date,
): { zone: string; local_time: string; utc_offset: string; weekday: string; utc_time: string } | undefined {
  if (zone !== 'UTC' && !ZONES.has(zone)) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
    } catch {
      return undefined;
    }
  }
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    weekday: 'long',
    timeZoneName: 'longOffset',
  }).formatToParts(now);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const gmt = get('timeZoneName'); // "GMT+05:30", or "GMT" at zero
  const offset = gmt === 'GMT' ? '+00:00' : gmt.slice(3);
  return {
    zone,
    local_time: `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}${offset}`,
    utc_offset: offset,
    weekday: get('weekday'),
    utc_time: `${now.toISOString().slice(0, 19)}Z`,
  };
}
