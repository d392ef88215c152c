/**
 * A parser for the part of PromQL the Grafana dashboard and the alert rules use (selectors with
 * matchers, ranges, `offset`, functions, aggregations with by/without, binary operators and `or`,
 * numbers, parentheses): enough to refuse a typo and to list the metric names an expression reads.
 * It throws on what it does not know.
 */
const FUNCTIONS = new Set([
  'rate',
  'irate',
  'increase',
  'delta',
  'histogram_quantile',
  'vector',
  'scalar',
  'abs',
  'round',
  'clamp_min',
  'clamp_max',
  'time',
  'label_replace',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
  'sum_over_time',
]);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count', 'topk', 'bottomk', 'quantile', 'stddev', 'group']);
const BINARY = new Set(['+', '-', '*', '/', '%', '^', '==', '!=', '>', '<', '>=', '<=', 'or', 'and', 'unless']);

type Token = { kind: 'ident' | 'number' | 'string' | 'duration' | 'span' | 'punct' | 'op'; text: string };

function tokenize(expr: string): Token[] {
  const out: Token[] = [];
  const re =
    /\s*(?:(\[[^\]]+\])|("(?:[^"\\]|\\.)*")|([a-zA-Z_:][a-zA-Z0-9_:]*)|(\d+[smhdw](?![a-zA-Z0-9_])|\$__(?:rate_interval|interval|range)\b)|(\d+(?:\.\d+)?)|(=~|!~|==|!=|>=|<=|[-+*/%^<>=])|([(){},]))/y;
  let at = 0;
  while (at < expr.length) {
    if (/^\s*$/.test(expr.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(expr);
    if (m === null) throw new Error(`cannot read "${expr.slice(at, at + 20)}" in ${expr}`);
    at = re.lastIndex;
    if (m[1] !== undefined) {
      if (!/^\[(?:\d+[smhdw]|\$__(?:rate_interval|interval|range))\]$/.test(m[1])) throw new Error(`bad range ${m[1]} in ${expr}`);
      out.push({ kind: 'duration', text: m[1] });
    } else if (m[2] !== undefined) out.push({ kind: 'string', text: m[2] });
    else if (m[3] !== undefined) out.push({ kind: BINARY.has(m[3]) ? 'op' : 'ident', text: m[3] });
    else if (m[4] !== undefined) out.push({ kind: 'span', text: m[4] });
    else if (m[5] !== undefined) out.push({ kind: 'number', text: m[5] });
    else if (m[6] !== undefined) out.push({ kind: m[6] === '=' || m[6] === '=~' || m[6] === '!~' ? 'punct' : 'op', text: m[6] });
    else out.push({ kind: 'punct', text: m[7] });
  }
  return out;
}

/** The metric names `expr` reads; throws when it is not PromQL of the kind above. */
export function metricsOf(expr: string): string[] {
  const tokens = tokenize(expr);
  let i = 0;
  const names: string[] = [];
  const peek = () => tokens[i];
  const take = (text?: string): Token => {
    const t = tokens[i++];
    if (t === undefined || (text !== undefined && t.text !== text)) throw new Error(`expected ${text ?? 'more'} at token ${i} of ${expr}`);
    return t;
  };
  const labelList = () => {
    take('(');
    while (peek()?.text !== ')') {
      if (take().kind !== 'ident') throw new Error(`a label name expected in ${expr}`);
      if (peek()?.text === ',') take(',');
    }
    take(')');
  };
  const matchers = () => {
    take('{');
    while (peek()?.text !== '}') {
      if (take().kind !== 'ident') throw new Error(`a label name expected in ${expr}`);
      const op = take();
      if (!['=', '!=', '=~', '!~'].includes(op.text)) throw new Error(`bad matcher ${op.text} in ${expr}`);
      if (take().kind !== 'string') throw new Error(`a quoted value expected in ${expr}`);
      if (peek()?.text === ',') take(',');
    }
    take('}');
  };
  const args = () => {
    take('(');
    while (peek()?.text !== ')') {
      expression();
      if (peek()?.text === ',') take(',');
    }
    take(')');
  };
  const term = (): void => {
    const t = take();
    if (t.kind === 'number' || t.kind === 'string') return;
    if (t.text === '(') {
      expression();
      take(')');
    } else if (t.kind === 'ident' && AGGREGATIONS.has(t.text)) {
      if (peek()?.text === 'by' || peek()?.text === 'without') take(), labelList();
      args();
      if (peek()?.text === 'by' || peek()?.text === 'without') take(), labelList();
    } else if (t.kind === 'ident' && FUNCTIONS.has(t.text)) args();
    else if (t.kind === 'ident') {
      names.push(t.text);
      if (peek()?.text === '{') matchers();
    } else throw new Error(`unexpected ${t.text} in ${expr}`);
    if (peek()?.kind === 'duration') take();
    if (peek()?.text === 'offset' && tokens[i + 1]?.kind === 'span') i += 2;
  };
  const expression = (): void => {
    term();
    while (peek()?.kind === 'op') {
      take();
      term();
    }
  };
  expression();
  if (i !== tokens.length) throw new Error(`left over from token ${i} in ${expr}`);
  return names;
}
