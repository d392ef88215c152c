/** GSM 03.38's default alphabet (and its extension table): a text within it travels as GSM-7. */
const GSM7 = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà^{}\\[~]|€',
);

/** The text of the message: the template with the code in place of each {code}. */
export function renderMessage(template: string, code: string): string {
  return template.replaceAll('{code}', code);
}

/** Whether the text needs UCS-2 (Arabic, for instance) rather than GSM-7 on the radio link. */
export function needsUnicode(text: string): boolean {
  for (const ch of text) if (!GSM7.has(ch)) return true;
  return false;
}

/** The text as UCS-2 (UTF-16 big-endian) in hex, for providers that take a hex-encoded Unicode body. */
export function ucs2Hex(text: string): string {
  const le = Buffer.from(text, 'utf16le');
  const be = Buffer.alloc(le.length);
  for (let i = 0; i < le.length; i += 2) {
    be[i] = le[i + 1]!;
    be[i + 1] = le[i]!;
  }
  return be.toString('hex').toUpperCase();
}
