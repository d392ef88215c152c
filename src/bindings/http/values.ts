import { Errors } from '../../basics/errors';
import { type Charset, UTF8 } from '../../basics/charset';
import { urlDecodeBytes } from '../../basics/url-decode';
import { dangerousAt } from '../../basics/request-validation';

/** The two collections ASMX reads parameters from, by the name request validation gives them. */
export type Collection = 'QueryString' | 'Form';

const COMMA = 0x2c;

/**
 * One name's values as sent, joined by commas as NameValueCollection.Get joins them, and decoded
 * once when read: memory in proportion to the bytes, however many values. UTF-8 is decoded whole
 * (a comma ends any sequence left open, as the end of a value does); another encoding value by value.
 */
class Values {
  private bytes = Buffer.allocUnsafe(16);
  private length = 0;
  private count = 0;
  private text: string | undefined;

  /** `ends`: where each value ends, kept for an encoding decoded value by value. */
  constructor(
    readonly name: string | null,
    private readonly encoding: Charset,
    private readonly ends: number[] | null = encoding === UTF8 ? null : [],
  ) {}

  add(value: Buffer): void {
    const need = this.length + value.length + 1;
    if (need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    if (this.count++ > 0) this.bytes[this.length++] = COMMA;
    this.length += value.copy(this.bytes, this.length);
    this.ends?.push(this.length);
  }

  joined(): string {
    if (this.text !== undefined) return this.text;
    const all = this.bytes.subarray(0, this.length);
    if (this.ends === null) return (this.text = urlDecodeBytes(all, this.encoding));
    const parts: string[] = [];
    let start = 0;
    for (const end of this.ends) {
      parts.push(urlDecodeBytes(all.subarray(start, end), this.encoding));
      start = end + 1;
    }
    return (this.text = parts.join(','));
  }
}

/**
 * A query string or form as ASP.NET's HttpValueCollection holds it (FillFromEncodedBytes over a
 * NameValueCollection): names without regard to case, in the order first seen and spelled as first
 * seen, each with its values. A segment without `=` is a value without a name (null), and a trailing
 * `&` adds an empty one. Reading a name gives its values joined by commas.
 */
export class ValueCollection {
  private readonly entries = new Map<string | null, Values>();

  private constructor(private readonly encoding: Charset) {}

  /**
   * `a=1&b=2`, byte by byte, names and values URL-decoded with the request's encoding. Like
   * ThrowIfMaxHttpCollectionKeysExceeded, a segment is refused once the collection holds `maxKeys`
   * names (the nameless one counting as one), before it is decoded: a flood of names costs little.
   */
  static parse(bytes: Buffer, encoding: Charset, collection: Collection, maxKeys: number): ValueCollection {
    const c = new ValueCollection(encoding);
    let start = 0;
    while (start < bytes.length) {
      if (c.entries.size >= maxKeys) throw Errors.tooManyKeys(collection);
      let end = bytes.indexOf(0x26, start);
      if (end === -1) end = bytes.length;
      const segment = bytes.subarray(start, end);
      // only within the segment, so that many segments without `=` are not a scan each to the end
      const eq = segment.indexOf(0x3d);
      if (eq === -1) c.add(null, segment);
      else c.add(urlDecodeBytes(segment.subarray(0, eq), encoding), segment.subarray(eq + 1));
      if (end === bytes.length - 1) c.add(null, segment.subarray(0, 0));
      start = end + 1;
    }
    return c;
  }

  private add(name: string | null, value: Buffer): void {
    const key = name?.toLowerCase() ?? null;
    let values = this.entries.get(key);
    if (values === undefined) this.entries.set(key, (values = new Values(name, this.encoding)));
    values.add(value);
  }

  /** NameValueCollection.Get: the values of `name` (null: those without a name) joined by commas. */
  get(name: string | null): string | undefined {
    return this.entries.get(name?.toLowerCase() ?? null)?.joined();
  }

  /**
   * ASP.NET request validation as HttpRequest runs it on the collection's first reading
   * (ValidateHttpValueCollection, eager under requestValidationMode 4.0, the default without
   * `<httpRuntime targetFramework>`): each name in order, but those starting `__` (ASP.NET's own
   * fields, HttpValueCollection.KeyIsCandidateForValidation), its values joined and without NULs
   * (RemoveNullCharacters); the first that looks like markup or a character reference
   * (IsDangerousString) refuses the request. Names themselves are not validated.
   */
  validate(collection: Collection): this {
    for (const values of this.entries.values()) {
      if (values.name?.startsWith('__')) continue;
      const joined = values.joined();
      const value = joined.includes('\0') ? joined.replaceAll('\0', '') : joined;
      const at = dangerousAt(value);
      if (at !== -1) throw Errors.dangerousValue(collection, values.name, value, at);
    }
    return this;
  }
}
