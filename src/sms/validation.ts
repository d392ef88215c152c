import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { SmsConfig } from '../config';

export type RefusalReason = 'code' | 'phone' | 'country' | 'not_mobile';

export type Checked = { ok: true; code: string; phone: string } | { ok: false; reason: RefusalReason };

/** Letters and digits of any script: the app may make codes in Arabic-Indic digits. */
const CODE = /^[\p{L}\p{Nd}]{1,12}$/u;
/** Longer than any number with its spaces and punctuation; the parser is not given more. */
const MAX_PHONE_CHARS = 40;
/** Premium-rate, shared-cost, VoIP and other types are where SMS-pumping fraud pays: refused. */
const MOBILE_TYPES = new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE']);

/**
 * The request as the SMS policy sees it: a code to text and the phone in E.164, or why not.
 * libphonenumber-js's full metadata ('max') checks each number against its country's ranges.
 */
export function checkRequest(
  code: string | null,
  phone: string | null,
  policy: Pick<SmsConfig, 'defaultRegion' | 'allowedCountries'>,
): Checked {
  if (code === null || !CODE.test(code)) return { ok: false, reason: 'code' };
  if (phone === null || phone.length > MAX_PHONE_CHARS) return { ok: false, reason: 'phone' };
  const parsed = parsePhoneNumberFromString(
    phone,
    policy.defaultRegion === null ? undefined : { defaultCountry: policy.defaultRegion as CountryCode },
  );
  if (parsed === undefined || !parsed.isValid()) return { ok: false, reason: 'phone' };
  const country = parsed.country;
  if (policy.allowedCountries.length > 0 && (country === undefined || !policy.allowedCountries.includes(country))) {
    return { ok: false, reason: 'country' };
  }
  const type = parsed.getType();
  if (type !== undefined && !MOBILE_TYPES.has(type)) return { ok: false, reason: 'not_mobile' };
  return { ok: true, code, phone: parsed.number };
}
