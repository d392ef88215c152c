import { type Charset, UTF8 } from './charset';

/**
 * HttpUtility.UrlDecode: `+` is a space, `%XX` is a byte, `%uXXXX` is a UTF-16 unit (.NET's HTTP
 * proxies send non-ASCII that way), and anything else, including a broken escape, stays as written.
 * The bytes are decoded with the request's encoding; a sequence invalid in it becomes U+FFFD.
 */
export function urlDecodeBytes(bytes: Buffer, charset: Charset = UTF8): string {
  // Fast path: nothing escaped.
  if (!bytes.includes(0x25) && !bytes.includes(0x2b)) return charset.decode(bytes);
  let text = '';
  // Decoded bytes are never more than the escaped ones: written in place of a number per byte.
  const pending = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  const flush = () => {
    if (length > 0) text += charset.decode(pending.subarray(0, length));
    length = 0;
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x2b) {
      pending[length++] = 0x20;
      continue;
    }
    if (b === 0x25 && bytes[i + 1] === 0x75 && isHex(bytes, i + 2, 4)) {
      flush();
      text += String.fromCharCode(parseInt(bytes.toString('latin1', i + 2, i + 6), 16));
      i += 5;
      continue;
    }
    if (b === 0x25 && isHex(bytes, i + 1, 2)) {
      pending[length++] = parseInt(bytes.toString('latin1', i + 1, i + 3), 16);
      i += 2;
      continue;
    }
    pending[length++] = b;
  }
  flush();
  return text;
}

/** HttpUtility.UrlDecode of a string: its characters as UTF-8, escapes as above. */
export function urlDecode(text: string): string {
  return urlDecodeBytes(Buffer.from(text, 'utf8'));
}

function isHex(bytes: Buffer, start: number, count: number): boolean {
  if (start + count > bytes.length) return false;
  for (let i = start; i < start + count; i++) {
    const c = bytes[i] | 0x20;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}
