/** The console's style sheet, served as /console.css: the CSP lets the page load it and nothing inline. */
export const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 2em; color: #222; background: #fafafa; }
h1 { font-size: 1.4em; margin: .6em 0 .2em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .4em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin: 1em 0 .3em; }
.meta { color: #666; font-size: .9em; }
.verdict { padding: .7em 1em; border-radius: 4px; font-size: 1.1em; margin: .6em 0; }
.verdict.go { background: #e3f5e1; border: 1px solid #6c6; }
.verdict.wait { background: #fdecea; border: 1px solid #d66; }
.verdict ul { margin: .3em 0 0; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.charts figure { margin: 0; background: #fff; border: 1px solid #ddd; padding: 6px; max-width: 572px; }
table { border-collapse: collapse; background: #fff; margin: .3em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
.legend { list-style: none; padding: 0; margin: 4px 0 0; display: flex; flex-wrap: wrap; gap: 10px; font-size: .85em; }
.bad { color: #b00; font-weight: bold; }
.ok { color: #070; font-weight: bold; }
.difference { background: #fff; border: 1px solid #ddd; padding: 8px; margin: 10px 0; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.side pre { margin: 0; padding: 6px; background: #f4f4f4; border: 1px solid #ddd; overflow: auto; max-height: 24em; font-size: 12px; white-space: pre-wrap; word-break: break-all; }
.side mark { background: #ffe08a; }
.noise { color: #666; }
`;
