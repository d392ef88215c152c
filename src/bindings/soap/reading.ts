/**
 * How ASMX reads an operation's parameters out of soap:Body, as the code XmlSerializer generates for
 * a wrapped document/literal method (XmlSerializationReaderILGen.GenerateLiteralMembersElement) runs
 * it over XmlTextReader's nodes, written as a machine fed one node at a time by either reader
 * (scan.ts, quick-scan.ts):
 *
 * - every child of the Body that is the operation's element is read, the parameters of a later one
 *   replacing those of an earlier one (the values live in one array across the loop); any other
 *   element is skipped whole, text is passed over;
 * - inside it, the first element of each parameter's name is read with XmlReader.ReadElementString,
 *   and anything else is skipped;
 * - ReadElementString takes the text (text, white space, CDATA) that comes first, also inside one
 *   child element (its ReadString steps into a start tag), and then needs an end tag: another
 *   element, a comment or a processing instruction there is an XmlException (a bare 400). When the
 *   end tag it met was a child's, the reading goes on inside the parameter, one level off: the
 *   parameter's own end tag then closes the operation element as far as the reader knows, and its
 *   remaining children are taken for the Body's;
 * - the loop over the Body ends at the first end tag it meets.
 *
 * A value that does not convert (a char's code) fails at once; nothing after the first failure is
 * read, by .NET or by us.
 */

export interface ParamPlan {
  readonly name: string;
  /** Why the text does not convert (.NET's reasons), or null when it does. Absent: any text does. */
  readonly check?: (text: string) => readonly string[] | null;
}

/** The operation whose parameters are read: its element and its parameters, all in `ns`. */
export interface OperationPlan {
  readonly ns: string;
  readonly name: string;
  readonly params: readonly ParamPlan[];
}

export interface ReadValue {
  readonly text: string;
  /** xsi:nil="true" on an element with no content. */
  readonly nil: boolean;
}

/** Why the reading stopped: an XmlException (the reader met markup where it needed text) or a value that did not convert. */
export type ReadFailure =
  | { readonly kind: 'markup' }
  | { readonly kind: 'value'; readonly param: string; readonly reasons: readonly string[]; readonly index: number };

enum State {
  /** The loop over the Body's children: an element is the operation's, or skipped. */
  Body,
  /** The loop over the operation element's children. */
  Members,
  /** ReadElementString has stepped over a parameter's start tag. */
  First,
  /** ReadString has stepped into a child's start tag. */
  Inner,
  /** Collecting text. */
  Text,
  /** Skipping an element whole. */
  Skip,
  /** The loop over the Body has ended: nothing more is a parameter. */
  Done,
}

export class ParamReader {
  readonly values = new Map<string, ReadValue>();
  failure: ReadFailure | null = null;
  private state = State.Body;
  /** Where a skip returns, and how deep it is. */
  private resume = State.Body;
  private skipDepth = 0;
  private readonly read: boolean[];
  private param: ParamPlan | null = null;
  private text = '';
  private nil = false;

  constructor(private readonly op: OperationPlan) {
    this.read = op.params.map(() => false);
  }

  get done(): boolean {
    return this.state === State.Done || this.failure !== null;
  }

  /**
   * A start tag. `nil` is whether it has xsi:nil="true"; for an empty element (`<a/>`), `next` is
   * the index of the node after it. Returns false when the reading has failed.
   */
  open(uri: string, local: string, empty: boolean, nil: boolean, next: number): boolean {
    switch (this.state) {
      case State.Body:
        if (uri === this.op.ns && local === this.op.name) {
          this.read.fill(false);
          if (!empty) this.state = State.Members;
        } else this.skip(empty, State.Body);
        return true;
      case State.Members: {
        const i = uri === this.op.ns ? this.paramIndex(local) : -1;
        if (i === -1) {
          this.skip(empty, State.Members);
          return true;
        }
        this.read[i] = true;
        this.param = this.op.params[i];
        this.text = '';
        this.nil = nil;
        // An empty parameter element is an empty string, and the reader is on what follows.
        if (empty) return this.finish(next);
        this.state = State.First;
        return true;
      }
      case State.First:
        // ReadString steps into a child's start tag, unless it is empty: then it stops on it.
        if (empty) return this.fail();
        this.state = State.Inner;
        return true;
      case State.Inner:
      case State.Text:
        return this.fail();
      case State.Skip:
        if (!empty) this.skipDepth++;
        return true;
      default:
        return true;
    }
  }

  /** Text, white space or CDATA. */
  textNode(text: string): void {
    if (this.state === State.First || this.state === State.Inner || this.state === State.Text) {
      this.text += text;
      this.state = State.Text;
    }
  }

  /** A comment or processing instruction: passed over between elements, fatal where text is read. */
  otherNode(): boolean {
    if (this.state === State.First || this.state === State.Inner || this.state === State.Text) return this.fail();
    return true;
  }

  /**
   * An end tag (not that of an empty element). `next` is the index of the node after it, where
   * .NET reports a value that does not convert. Returns false when the reading has failed.
   */
  close(next: number): boolean {
    switch (this.state) {
      case State.Body:
        this.state = State.Done;
        return true;
      case State.Members:
        // ReadEndElement takes whatever end tag comes, and the Body's loop goes on.
        this.state = State.Body;
        return true;
      case State.First:
      case State.Inner:
      case State.Text:
        return this.finish(next);
      case State.Skip:
        if (--this.skipDepth === 0) this.state = this.resume;
        return true;
      default:
        return true;
    }
  }

  /** The parameter of that name not yet read in this operation element, or -1. */
  private paramIndex(local: string): number {
    const { params } = this.op;
    for (let k = 0; k < params.length; k++) if (!this.read[k] && params[k].name === local) return k;
    return -1;
  }

  /** The value read; the reader is back in the loop over the operation's children. */
  private finish(next: number): boolean {
    const param = this.param!;
    this.state = State.Members;
    const reasons = param.check?.(this.text) ?? null;
    if (reasons !== null) {
      this.failure = { kind: 'value', param: param.name, reasons, index: next };
      return false;
    }
    this.values.set(param.name, { text: this.text, nil: this.nil && this.text === '' });
    return true;
  }

  private skip(empty: boolean, resume: State): void {
    if (empty) return;
    this.state = State.Skip;
    this.resume = resume;
    this.skipDepth = 1;
  }

  private fail(): false {
    this.failure = { kind: 'markup' };
    return false;
  }
}
