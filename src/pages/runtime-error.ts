import type { Response } from 'express';
import { escapeMarkup } from '../escape';

/**
 * What a remote client of IIS sees when ASP.NET itself refuses a request (a protocol the web.config
 * leaves out, a method the handler does not take) under the default `customErrors mode="RemoteOnly"`:
 * the generic "Runtime Error" page, which names no cause.
 */
export function runtimeErrorPage(applicationPath: string): string {
  const app = escapeMarkup(applicationPath === '' ? '/' : applicationPath);
  return [
    '<!DOCTYPE html>',
    '<html>',
    '    <head>',
    '        <title>Runtime Error</title>',
    '        <meta name="viewport" content="width=device-width" />',
    '    </head>',
    '',
    '    <body bgcolor="white">',
    '',
    `            <span><H1>Server Error in '${app}' Application.<hr width=100% size=1 color=silver></H1>`,
    '',
    '            <h2> <i>Runtime Error</i> </h2></span>',
    '',
    '            <font face="Arial, Helvetica, Geneva, SunSans-Regular, sans-serif ">',
    '',
    '            <b> Description: </b>An application error occurred on the server. The current custom error settings for this application prevent the details of the application error from being viewed remotely (for security reasons). It could, however, be viewed by browsers running on the local server machine.',
    '            <br><br>',
    '',
    '            <b>Details:</b> To enable the details of this specific error message to be viewable on remote machines, please create a &lt;customErrors&gt; tag within a &quot;web.config&quot; configuration file located in the root directory of the current web application. This &lt;customErrors&gt; tag should then have its &quot;mode&quot; attribute set to &quot;Off&quot;.<br><br>',
    '',
    '            <table width=100% bgcolor="#ffffcc">',
    '               <tr>',
    '                  <td>',
    '                      <code><pre>',
    '',
    '&lt;!-- Web.Config Configuration File --&gt;',
    '',
    '&lt;configuration&gt;',
    '    &lt;system.web&gt;',
    '        &lt;customErrors mode=&quot;Off&quot;/&gt;',
    '    &lt;/system.web&gt;',
    '&lt;/configuration&gt;</pre></code>',
    '',
    '                  </td>',
    '               </tr>',
    '            </table>',
    '',
    '            <br>',
    '',
    '    </body>',
    '</html>',
    '',
  ].join('\r\n');
}

export function sendRuntimeError(res: Response, status: number, applicationPath: string): void {
  const body = Buffer.from(runtimeErrorPage(applicationPath), 'utf8');
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'private', 'Content-Length': String(body.length) });
  res.end(body);
}
