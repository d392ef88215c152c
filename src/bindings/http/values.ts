import { Errors } from '../../basics/errors';
import type { Charset } from '../../basics/charset';
import { urlDecodeBytes } from '../../basics/url-decode';
import { dangerousAt } from '../../basics/request-validation';

/** The two collections ASMX reads parameters from, by the name request validation gives them. */
export type Collection = 'QueryString' | 'Form';

interface Entry {
  /** As first spelled; null for the values of segments without `=`. */
  readonly name: string | null;
  readonly values: string[];
}

/**
 * A query string or form as ASP.NET's HttpValueCollection holds it (FillFromEncodedBytes over a
 * NameValueCollection): names without regard to case, in the order first seen and spelled as first
 * seen, each with its values. A segment without `=` is a value without a name (null), and a trailing
 * `&` adds an empty one. Reading a name gives its values joined by commas.
 */
export class ValueCollection {
  private readonly entries = new Map<string | null, Entry>();

  /**
   * `a=1&b=2`, byte by byte, names and values URL-decoded with the request's encoding. Like
   * ThrowIfMaxHttpCollectionKeysExceeded, a segment is refused once the collection holds `maxKeys`
   * names (the nameless one counting as one), before it is decoded: a flood of names costs little.
   */
  static parse(bytes: Buffer, encoding: Charset, collection: Collection, maxKeys: number): ValueCollection {
    const c = new ValueCollection();
    let start = 0;
    while (start < bytes.length) {
      if (c.entries.size >= maxKeys) throw Errors.tooManyKeys(collection);
      let end = bytes.indexOf(0x26, start);
      if (end === -1) end = bytes.length;
      // only within the segment, so that many segments without `=` are not a scan each to the end
      const eq = bytes.subarray(start, end).indexOf(0x3d);
      if (eq === -1) c.add(null, urlDecodeBytes(bytes.subarray(start, end), encoding));
      else c.add(urlDecodeBytes(bytes.subarray(start, start + eq), encoding), urlDecodeBytes(bytes.subarray(start + eq + 1, end), encoding));
      if (end === bytes.length - 1) c.add(null, '');
      start = end + 1;
    }
    return c;
  }

  private add(name: string | null, value: string): void {
    const key = name?.toLowerCase() ?? null;
    const entry = this.entries.get(key);
    if (entry === undefined) this.entries.set(key, { name, values: [value] });
    else entry.values.push(value);
  }

  /** NameValueCollection.Get: the values of `name` (null: those without a name) joined by commas. */
  get(name: string | null): string | undefined {
    return this.entries.get(name?.toLowerCase() ?? null)?.values.join(',');
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
    for (const { name, values } of this.entries.values()) {
      if (name?.startsWith('__')) continue;
      const joined = values.join(',');
      const value = joined.includes('\0') ? joined.replaceAll('\0', '') : joined;
      const at = dangerousAt(value);
      if (at !== -1) throw Errors.dangerousValue(collection, name, value, at);
    }
    return this;
  }
}
