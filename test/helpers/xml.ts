import sax from 'sax';

/**
 * XML reduced to its meaning: elements and attributes by expanded name, text as written. Namespace
 * declarations, prefixes of element names, attribute order and white space between elements (the
 * indentation) do not count; text inside a leaf element does.
 */
export interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export function parseXml(source: string): XmlNode {
  const parser = sax.parser(true, { xmlns: true });
  const stack: XmlNode[] = [];
  let root: XmlNode | null = null;
  parser.onerror = (e) => {
    throw e;
  };
  parser.onopentag = (node) => {
    const tag = node as sax.QualifiedTag;
    const attributes: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) {
      if (a.prefix === 'xmlns' || a.name === 'xmlns') continue;
      attributes[`{${a.uri}}${a.local}`] = a.value;
    }
    const el: XmlNode = { name: `{${tag.uri}}${tag.local}`, attributes, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1].children.push(el);
    else root = el;
    stack.push(el);
  };
  const onText = (t: string) => {
    if (stack.length > 0) stack[stack.length - 1].text += t;
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = () => {
    const el = stack.pop()!;
    if (el.children.length > 0 && el.text.trim() === '') el.text = '';
  };
  parser.write(source).close();
  if (root === null) throw new Error('no root element');
  return root;
}

/** Finds the first element with this local name, depth first. */
export function findElement(node: XmlNode, local: string): XmlNode | undefined {
  if (node.name.endsWith(`}${local}`)) return node;
  for (const c of node.children) {
    const found = findElement(c, local);
    if (found) return found;
  }
  return undefined;
}
