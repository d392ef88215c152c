import type { Response } from '../transport/types';
import { send } from '../bindings/send';
import { escapeMarkup, htmlEncode } from '../basics/escape';

/**
 * ASP.NET's runtime error page as a remote client sees it (customErrors RemoteOnly, the default):
 * the same generic page whatever went wrong, without the error's text. ASMX ends this way where
 * ASP.NET, not the service, refuses a request: a method no protocol accepts on a service page (405),
 * a URL naming no operation it can serve, such as HEAD on `/X.asmx/Op` or an empty `/X.asmx/`
 * ("Request format is unrecognized for URL unexpectedly ending in ...", 500), a path request
 * validation refuses (400). A 404 has a page of its own, which names the path.
 */

const CRLF = '\r\n';

/** A web.config sample as the page shows it: HTML-encoded, in a preformatted box. */
const configSample = (customErrors: string) =>
  htmlEncode(
    [
      '<!-- Web.Config Configuration File -->',
      '',
      '<configuration>',
      '    <system.web>',
      `        ${customErrors}`,
      '    </system.web>',
      '</configuration>',
    ].join(CRLF),
  );

function box(title: string, description: string, content: string): string {
  return (
    `            <b>${title}:</b> ${htmlEncode(description)}<br><br>${CRLF}${CRLF}` +
    `            <table width=100% bgcolor="#ffffcc">${CRLF}               <tr>${CRLF}                  <td>${CRLF}                      <code><pre>${CRLF}${CRLF}` +
    `${content}</pre>                      </code>${CRLF}${CRLF}                  </td>${CRLF}               </tr>${CRLF}            </table>${CRLF}${CRLF}` +
    `            <br>${CRLF}${CRLF}`
  );
}

const STYLE = [
  '         body {font-family:"Verdana";font-weight:normal;font-size: .7em;color:black;} ',
  '         p {font-family:"Verdana";font-weight:normal;color:black;margin-top: -5px}',
  '         b {font-family:"Verdana";font-weight:bold;color:black;margin-top: -5px}',
  '         H1 { font-family:"Verdana";font-weight:normal;font-size:18pt;color:red }',
  '         H2 { font-family:"Verdana";font-weight:normal;font-size:14pt;color:maroon }',
  '         pre {font-family:"Consolas","Lucida Console",Monospace;font-size:11pt;margin:0;padding:0.5em;line-height:14pt}',
  '         .marker {font-weight: bold; color: black;text-decoration: none;}',
  '         .version {color: gray;}',
  '         .error {margin-bottom: 10px;}',
  '         .expandable { text-decoration:underline; font-weight:bold; color:navy; cursor:pointer; }',
  '         @media screen and (max-width: 639px) {',
  '          pre { width: 440px; overflow: auto; white-space: pre-wrap; word-wrap: break-word; }',
  '         }',
  '         @media screen and (max-width: 479px) {',
  '          pre { width: 280px; }',
  '         }',
];

/**
 * ErrorFormatter.GetHtmlErrorMessage's frame as a remote client gets it (no version footer): the
 * application's heading, the error's title, its description, and what follows.
 */
function errorFrame(virtualPath: string, title: string, description: string, details: string): string {
  return (
    `<!DOCTYPE html>${CRLF}<html>${CRLF}    <head>${CRLF}        <title>${title}</title>${CRLF}` +
    `        <meta name="viewport" content="width=device-width" />${CRLF}        <style>${CRLF}` +
    STYLE.map((line) => line + CRLF).join('') +
    `        </style>${CRLF}    </head>${CRLF}${CRLF}    <body bgcolor="white">${CRLF}${CRLF}` +
    `            <span><H1>Server Error in '${escapeMarkup(virtualPath)}' Application.<hr width=100% size=1 color=silver></H1>${CRLF}${CRLF}` +
    `            <h2> <i>${title}</i> </h2></span>${CRLF}${CRLF}` +
    `            <font face="Arial, Helvetica, Geneva, SunSans-Regular, sans-serif ">${CRLF}${CRLF}` +
    `            <b> Description: </b>${description}${CRLF}            <br><br>${CRLF}${CRLF}` +
    details +
    `            </font>${CRLF}${CRLF}    </body>${CRLF}</html>${CRLF}`
  );
}

/** The page for an application at `virtualPath` ('/' at the site root, else the virtual directory). */
export function runtimeErrorPage(virtualPath: string): string {
  return errorFrame(
    virtualPath,
    'Runtime Error',
    'An application error occurred on the server. The current custom error settings for this application ' +
      'prevent the details of the application error from being viewed remotely (for security reasons). It could, however, be viewed by ' +
      'browsers running on the local server machine.',
    box(
      'Details',
      'To enable the details of this specific error message to be viewable on remote machines, please create a <customErrors> tag within a ' +
        '"web.config" configuration file located in the root directory of the current web application. This <customErrors> tag should then ' +
        'have its "mode" attribute set to "Off".',
      configSample('<customErrors mode="Off"/>'),
    ) +
      box(
        'Notes',
        'The current error page you are seeing can be replaced by a custom error page by modifying the "defaultRedirect" attribute of the ' +
          "application's <customErrors> configuration tag to point to a custom error page URL.",
        configSample('<customErrors mode="RemoteOnly" defaultRedirect="mycustompage.htm"/>'),
      ),
  );
}

/**
 * PageNotFoundErrorFormatter: ASP.NET's 404, which it shows remote clients too (CanBeShownToAllUsers),
 * naming the path asked for (Request.Path, HTML-encoded). Its description is FormatPlainTextAsHtml's:
 * the second of two spaces as `&nbsp;`.
 */
export function notFoundPage(virtualPath: string, requestPath: string): string {
  return errorFrame(
    virtualPath,
    'The resource cannot be found.',
    'HTTP 404. The resource you are looking for (or one of its dependencies) could have been removed, had its name changed, or is ' +
      'temporarily unavailable. &nbsp;Please review the following URL and make sure that it is spelled correctly.',
    `            <b> Requested URL: </b>${escapeMarkup(requestPath)}<br><br>${CRLF}${CRLF}`,
  );
}

/**
 * The answers ASP.NET gives where it, not the service, refuses a request: the runtime error page with
 * the status of the refusal (400, 405, 500), and the 404 page.
 */
export interface ErrorPages {
  (res: Response, status: 400 | 405 | 500): void;
  notFound(res: Response, requestPath: string): void;
}

const HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'private' };

/** The pages, the runtime error page compiled once, for the application's virtual path. */
export function createErrorPage(basePath: string): ErrorPages {
  const virtualPath = basePath === '' ? '/' : basePath;
  const page = Buffer.from(runtimeErrorPage(virtualPath), 'utf8');
  const runtimeError = (res: Response, status: 400 | 405 | 500) => send(res, status, HEADERS, page);
  return Object.assign(runtimeError, {
    notFound: (res: Response, requestPath: string) => send(res, 404, HEADERS, notFoundPage(virtualPath, requestPath)),
  });
}
