import type { Response } from '../transport/types';
import { send } from '../bindings/send';
import { escapeMarkup, htmlEncode } from '../basics/escape';

/**
 * ASP.NET's runtime error page as a remote client sees it (customErrors RemoteOnly, the default):
 * the same generic page whatever went wrong, without the error's text. ASMX ends this way where
 * ASP.NET, not the service, refuses a request: a method no protocol accepts on a service page (405)
 * and a URL naming no operation it can serve, such as HEAD on `/X.asmx/Op` or an empty `/X.asmx/`
 * ("Request format is unrecognized for URL unexpectedly ending in ...", 500).
 */

const CRLF = '\r\n';

/** A web.config sample as the page shows it: HTML-encoded, in a preformatted box. */
const configSample = (customErrors: string) =>
  htmlEncode(
    ['<!-- Web.Config Configuration File -->', '', '<configuration>', '    <system.web>', `        ${customErrors}`, '    </system.web>', '</configuration>'].join(CRLF),
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

/** The page for an application at `virtualPath` ('/' at the site root, else the virtual directory). */
export function runtimeErrorPage(virtualPath: string): string {
  return (
    `<!DOCTYPE html>${CRLF}<html>${CRLF}    <head>${CRLF}        <title>Runtime Error</title>${CRLF}` +
    `        <meta name="viewport" content="width=device-width" />${CRLF}        <style>${CRLF}` +
    STYLE.map((line) => line + CRLF).join('') +
    `        </style>${CRLF}    </head>${CRLF}${CRLF}    <body bgcolor="white">${CRLF}${CRLF}` +
    `            <span><H1>Server Error in '${escapeMarkup(virtualPath)}' Application.<hr width=100% size=1 color=silver></H1>${CRLF}${CRLF}` +
    `            <h2> <i>Runtime Error</i> </h2></span>${CRLF}${CRLF}` +
    `            <font face="Arial, Helvetica, Geneva, SunSans-Regular, sans-serif ">${CRLF}${CRLF}` +
    '            <b> Description: </b>An application error occurred on the server. The current custom error settings for this application ' +
    'prevent the details of the application error from being viewed remotely (for security reasons). It could, however, be viewed by ' +
    `browsers running on the local server machine.${CRLF}            <br><br>${CRLF}${CRLF}` +
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
    ) +
    `            </font>${CRLF}${CRLF}    </body>${CRLF}</html>${CRLF}`
  );
}

export type ErrorPageSender = (res: Response, status: 405 | 500) => void;

/** Sends the page, compiled once for the application's virtual path. */
export function createErrorPage(basePath: string): ErrorPageSender {
  const page = Buffer.from(runtimeErrorPage(basePath === '' ? '/' : basePath), 'utf8');
  return (res, status) => send(res, status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'private' }, page);
}
