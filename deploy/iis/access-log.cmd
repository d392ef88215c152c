@echo off
rem IIS's access log without query strings, for the site in front of the Student Information service.
rem
rem IIS writes each request's query string to its log (the cs-uri-query field, on by default), and
rem AuthCode's holds a sign-in code and a phone number (GET /AuthCodeSending.asmx/AuthCode?code=...)
rem (the other operations' hold pupils' and devices' ids). IIS cannot leave out one field for one path,
rem so this leaves out the query string (and the referer, another page's URL with its query string)
rem for the whole site: each request is still logged, path, status and time included, and the
rem service's own log has the rest, masked, under the same request id (docs/logs.md).
rem
rem Run once, in an elevated command prompt:  access-log.cmd "Default Web Site"
rem (the site's name as IIS Manager shows it). The setting lives in applicationHost.config: a
rem web.config cannot change it (IIS locks the logging sections to the server). See README.md.
setlocal
set "SITE=%~1"
if "%SITE%"=="" set "SITE=Default Web Site"
%windir%\system32\inetsrv\appcmd.exe set config -section:system.applicationHost/sites "/[name='%SITE%'].logFile.logExtFileFlags:Date, Time, ClientIP, UserName, ServerIP, Method, UriStem, HttpStatus, Win32Status, TimeTaken, ServerPort, UserAgent, HttpSubStatus" /commit:apphost
if errorlevel 1 exit /b 1
echo The access log of "%SITE%" no longer writes query strings (cs-uri-query) or referers.
