/**
 * A whole number with its thousands grouped by commas, as `toLocaleString('en-US')` writes it
 * (1,000; 25,000). Not that call: the first use of Intl in a process loads ICU's data, 20 to 25 ms
 * of processor time, and the modules that say such numbers are loaded at every start.
 */
export function groupDigits(n: number): string {
  const whole = Math.round(n);
  const digits = String(Math.abs(whole)).replace(/\B(?=(\d{3})+$)/g, ',');
  return whole < 0 ? `-${digits}` : digits;
}
